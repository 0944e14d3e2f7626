import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Through the live gateway: `deny: [127.0.0.2, "::1"]` is not bypassed by
/// other spellings of those addresses; numeric IPv4 forms get 400, IPv6
/// spellings, IPv4-mapped, NAT64 and IPv4-compatible addresses 403.
@Suite(.timeLimit(.minutes(2)))
struct IPSpellingAccessTests {
    @Test func otherSpellingsOfDeniedAddressesAreRefused() async throws {
        let upstream = try await TestUpstream.start()
        let port = upstream.port
        let gateway = try await GatewayHarness.start { config in
            config.access.deny = [HostPattern("127.0.0.2")!, HostPattern("::1")!]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let cases: [(String, Int)] = [
            ("2130706434", 400), ("127.2", 400), ("0x7f000002", 400), ("0177.0.0.2", 400),
            ("[::ffff:127.0.0.2]", 403), ("[0::1]", 403), ("127.0.0.2", 403),
        ]
        for (host, status) in cases {
            let client = try await gateway.rawConnection()
            try await client.send("GET http://\(host):\(port)/echo HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n")
            let response = try #require(RawResponse(try await client.receive()), "\(host)")
            #expect(response.status == status, "\(host)")
        }
        #expect(upstream.requestsServed == 0)
    }

    /// `deny: [127.0.0.0/8]` also refuses the NAT64 and IPv4-compatible
    /// addresses carrying a loopback address (before, the gateway tried to connect).
    @Test func nat64AndIPv4CompatibleFormsOfADeniedRangeAreRefused() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.access.deny = [HostPattern("127.0.0.0/8")!]
        }
        defer { Task { try? await gateway.stop() } }
        for host in ["[64:ff9b::127.0.0.1]", "[64:ff9b::7f00:1]", "[::127.0.0.1]", "[::7f00:1]"] {
            let client = try await gateway.rawConnection()
            try await client.send("GET http://\(host):80/echo HTTP/1.1\r\nHost: \(host):80\r\nConnection: close\r\n\r\n")
            let response = try #require(RawResponse(try await client.receive()), "\(host)")
            #expect(response.status == 403, "\(host)")
        }
    }
}
