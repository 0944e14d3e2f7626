import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

@Suite(.timeLimit(.minutes(2)))
struct AccessControlTests {
    @Test func denyWinsOverAllowAndIsA403() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.access.allow = [HostPattern("127.0.0.1")!, HostPattern("*.allowed.test")!]
            config.access.deny = [HostPattern("blocked.allowed.test")!]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let allowed = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/status/200")])
        #expect(allowed.stdoutString == "200")

        for host in ["blocked.allowed.test", "elsewhere.test", "allowed.test"] {
            let denied = try await gateway.curl(["-i", "http://\(host)/"])
            let response = try #require(RawResponse(denied.stdout))
            #expect(response.status == 403, "\(host)")
            #expect(response.header("X-Gateway-Error") == "host_not_allowed")
            #expect(response.bodyText.contains("\"upstream\":\"\(host):80\""))
        }
        #expect(upstream.requestsServed == 1)
    }

    @Test func connectOnlyToAllowedPorts() async throws {
        let gateway = try await GatewayHarness.start()  // connect_ports: [443]
        defer { Task { try? await gateway.stop() } }
        let client = try await gateway.rawConnection()
        try await client.send("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
        let response = try #require(RawResponse(try await client.receive()))
        #expect(response.status == 403)
        #expect(response.header("X-Gateway-Error") == "port_not_allowed")
    }

    @Test func proxyAuthenticationRequiredThenAccepted() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.proxyAuth = ProxyAuthConfig(realm: "gateway", users: [
                ProxyUser(username: "dev", password: Secret(source: .env("GATEWAY_TEST_PROXY_PASSWORD"), value: "s3cret-proxy-pw"))
            ])
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let anonymous = try await gateway.curl(["-i", upstream.url("/echo")])
        let challenge = try #require(RawResponse(anonymous.stdout))
        #expect(challenge.status == 407)
        #expect(challenge.header("Proxy-Authenticate")?.hasPrefix("Basic realm=\"gateway\"") == true)
        #expect(challenge.header("X-Gateway-Error") == "proxy_auth_required")

        let wrong = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "-U", "dev:wrong", upstream.url("/echo")])
        #expect(wrong.stdoutString == "407")

        let right = try await gateway.curl(["-U", "dev:s3cret-proxy-pw", upstream.url("/echo")])
        let echo = try right.json(EchoReply.self)
        #expect(echo.values("Proxy-Authorization").isEmpty, "proxy credentials are hop-by-hop")
        #expect(upstream.requestsServed == 1)
        #expect(!gateway.logs.text.contains("s3cret-proxy-pw"))
    }

    @Test func gatewayErrorsAreJSONWithACause() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.pool.requestTimeout = .milliseconds(300)
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // Nothing listens on a port we just closed: 502 connect_failed.
        let closedPort = try await TestUpstream.start()
        let deadPort = closedPort.port
        try await closedPort.shutdown()
        let refused = try #require(RawResponse(try await gateway.curl(["-i", "http://127.0.0.1:\(deadPort)/"]).stdout))
        #expect(refused.status == 502)
        #expect(refused.header("X-Gateway-Error") == "connect_failed")
        #expect(refused.bodyText.contains("\"upstream\":\"127.0.0.1:\(deadPort)\""))
        #expect(refused.bodyText.contains("\"cause\":\"Connection refused (errno 111)\""), "\(refused.bodyText)")

        // The upstream takes longer than request_timeout: 504.
        let slow = try #require(RawResponse(try await gateway.curl(["-i", upstream.url("/delay/3000")]).stdout))
        #expect(slow.status == 504)
        #expect(slow.header("X-Gateway-Error") == "request_timeout")
    }

    @Test func upstreamDyingMidBodyEndsTheClientConnection() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let result = try await gateway.curl(["-o", "/dev/null", upstream.url("/reset-after/100000")])
        // 18: partial file (Content-Length not reached); 56: receive failure. Never 0.
        #expect([18, 56].contains(result.status), "curl exit \(result.status): \(result.stderrString)")
    }
}
