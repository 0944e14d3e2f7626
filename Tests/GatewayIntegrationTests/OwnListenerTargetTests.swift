import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The gateway's own listeners are never a proxy target: a proxy client cannot
/// read the admin (traces, HAR, metrics) through the proxy by any spelling of
/// its address, nor by `CONNECT`, nor make the proxy connect to itself.
@Suite(.timeLimit(.minutes(2)))
struct OwnListenerTargetTests {
    @Test func theAdminAndTheProxyAreRefusedAsTargetsInEverySpelling() async throws {
        let upstream = try await TestUpstream.start()
        let dir = try TraceTests.tempDir()
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); try? FileManager.default.removeItem(atPath: dir) } }
        // An exchange whose trace a proxy client must not read back.
        let first = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "\(upstream.baseURL)/echo?secret-query=alice"])
        #expect(first.stdoutString == "200")

        let admin = gateway.adminPort
        for target in [
            "http://127.0.0.1:\(admin)/traces.har", "http://localhost:\(admin)/traces", "http://0.0.0.0:\(admin)/metrics",
            "http://[::ffff:127.0.0.1]:\(admin)/stats", "http://127.0.0.1:\(gateway.proxyPort)/",
        ] {
            let result = try await gateway.curl(["-sS", "-D", "-", target])
            #expect(result.stdoutString.hasPrefix("HTTP/1.1 403"), "\(target): \(result.stdoutString.prefix(200))")
            #expect(result.stdoutString.lowercased().contains("x-gateway-error: host_not_allowed"), "\(target)")
            #expect(!result.stdoutString.contains("alice"), "\(target) leaked a trace")
        }
        // The admin itself still answers its own clients, and other targets still pass.
        let direct = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(gateway.adminURL)/metrics"])
        #expect(direct.stdoutString == "200")
        let other = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "\(upstream.baseURL)/echo"])
        #expect(other.stdoutString == "200")
    }

    @Test func aConnectToTheAdminPortIsRefusedEvenWhenItsPortIsAllowed() async throws {
        // A port that was free a moment ago, for the admin, so that `connect_ports` can name it.
        let probe = try await GatewayHarness.start()
        let adminPort = probe.adminPort
        try await probe.stop()
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            config.listen.admin = BindAddress(host: "127.0.0.1", port: adminPort)
            config.access.connectPorts = [adminPort]
        }
        defer { Task { try? await gateway.stop() } }

        let client = try await gateway.rawConnection()
        try await client.send("CONNECT 127.0.0.1:\(gateway.adminPort) HTTP/1.1\r\nHost: 127.0.0.1:\(gateway.adminPort)\r\n\r\n")
        let response = try #require(RawResponse(try await client.receiveUntil("\r\n\r\n", timeout: .seconds(10))))
        await client.close()
        #expect(response.status == 403)
        #expect(response.headers.contains { $0.0.lowercased() == "x-gateway-error" && $0.1 == "host_not_allowed" })
    }
}
