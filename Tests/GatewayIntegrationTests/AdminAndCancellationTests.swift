import Foundation
import GatewayTesting
import Testing

@Suite(.timeLimit(.minutes(2)))
struct AdminAndCancellationTests {
    @Test func adminServesHealthReadinessAndMetrics() async throws {
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        for path in ["/healthz", "/readyz"] {
            let result = try await ProcessRunner.run("curl", ["-s", "-w", " %{http_code}", "\(gateway.adminURL)\(path)"])
            #expect(result.stdoutString.hasSuffix(" 200"), "\(path)")
        }
        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"])
        #expect(metrics.stdoutString.contains("gateway_build_info"))
        let missing = try await ProcessRunner.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "\(gateway.adminURL)/nope"])
        #expect(missing.stdoutString == "404")
    }

    @Test func clientDisconnectCancelsTheUpstreamRequest() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let client = try await gateway.rawConnection()
        let host = "127.0.0.1:\(upstream.port)"
        try await client.send("GET http://\(host)/delay/10000 HTTP/1.1\r\nHost: \(host)\r\n\r\n")
        // Wait until the gateway holds an upstream connection for it, then hang up.
        let deadline = ContinuousClock.now + .seconds(5)
        while gateway.app.pool.openConnectionCount == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(gateway.app.pool.openConnectionCount == 1)
        await client.close()
        let closeDeadline = ContinuousClock.now + .seconds(5)
        while gateway.app.pool.openConnectionCount > 0, ContinuousClock.now < closeDeadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(gateway.app.pool.openConnectionCount == 0, "the upstream request must be cancelled, not left running")
    }
}
