import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// `deny` IP/CIDR rules apply to the address a
/// name resolves to, for forwarded requests and for `CONNECT` tunnels: a
/// name is no way around them.
@Suite(.timeLimit(.minutes(2)))
struct ResolvedAddressAccessTests {
    @Test func aNameResolvingToADeniedAddressIsRefused() async throws {
        let upstream = try await TestUpstream.start()
        let port = upstream.port
        let gateway = try await GatewayHarness.start { config in
            config.access.deny = [HostPattern("127.0.0.0/8")!, HostPattern("::1")!]
            config.access.connectPorts = [port]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let forwarded = try await gateway.rawConnection()
        try await forwarded.send("GET http://localhost:\(port)/echo HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n")
        let response = try #require(RawResponse(try await forwarded.receive()))
        #expect(response.status == 403)
        #expect(response.header("X-Gateway-Error") == "host_not_allowed")

        let tunnel = try await gateway.rawConnection()
        try await tunnel.send("CONNECT localhost:\(port) HTTP/1.1\r\nHost: localhost:\(port)\r\n\r\n")
        let refused = try #require(RawResponse(try await tunnel.receive()))
        #expect(refused.status == 403)
        #expect(upstream.requestsServed == 0)
    }

    @Test func aNameResolvingToAnAllowedAddressIsServed() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.access.deny = [HostPattern("10.0.0.0/8")!]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let result = try await gateway.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://localhost:\(upstream.port)/echo"])
        #expect(result.stdoutString == "200")
    }
}
