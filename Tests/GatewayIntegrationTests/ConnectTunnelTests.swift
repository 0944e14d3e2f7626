import Foundation
import GatewayTesting
import Testing

/// `https://` through CONNECT with curl to a TLS test upstream.
@Suite(.timeLimit(.minutes(2)))
struct ConnectTunnelTests {
    @Test func curlHttpsThroughConnectTunnel() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let dir = TestScratch.path("gw-tunnel")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try certificates.write(to: dir)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.access.connectPorts = [upstream.port]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl([
            "--cacert", paths.caBundle, "-H", "X-Through: tunnel",
            "https://localhost:\(upstream.port)/echo?tls=1", "https://localhost:\(upstream.port)/bytes/100000",
            "-w", "%{num_connects}",
        ])
        #expect(result.status == 0, "\(result.stderrString)")
        // The tunnel is blind: the upstream sees the client's own request, no Via.
        let received = upstream.receivedRequests
        #expect(received.first?.target == "/echo?tls=1")
        #expect(received.first?.headers.contains { $0[0] == "X-Through" && $0[1] == "tunnel" } == true)
        #expect(received.first?.headers.contains { $0[0].lowercased() == "via" } == false)
        #expect(upstream.requestsServed == 2)
        #expect(upstream.connectionsAccepted == 1)
        // The tunnel's log line comes when both sides have closed.
        let deadline = ContinuousClock.now + .seconds(5)
        while !gateway.logs.text.contains("CONNECT localhost:\(upstream.port) 200"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(gateway.logs.text.contains("CONNECT localhost:\(upstream.port) 200"))
    }

    @Test func connectToAClosedPortIs502() async throws {
        let closed = try await TestUpstream.start()
        let port = closed.port
        try await closed.shutdown()
        let gateway = try await GatewayHarness.start { config in
            config.access.connectPorts = [port]
        }
        defer { Task { try? await gateway.stop() } }
        let client = try await gateway.rawConnection()
        try await client.send("CONNECT 127.0.0.1:\(port) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        let response = try #require(RawResponse(try await client.receive()))
        #expect(response.status == 502)
        #expect(response.header("X-Gateway-Error") == "connect_failed")
    }

    @Test func bytesPipelinedAfterConnectAreNotLost() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.access.connectPorts = [upstream.port]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let client = try await gateway.rawConnection()
        // The inner request follows CONNECT in the same write, before the 200.
        try await client.send(
            "CONNECT 127.0.0.1:\(upstream.port) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\n\r\n"
                + "GET /status/200 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        let all = String(decoding: try await client.receive(timeout: .seconds(10)), as: UTF8.self)
        #expect(all.hasPrefix("HTTP/1.1 200 Connection Established\r\n\r\n"))
        #expect(all.contains("status 200"))
    }
}
