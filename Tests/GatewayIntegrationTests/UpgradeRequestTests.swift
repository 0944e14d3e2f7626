import Foundation
import GatewayConfig
import GatewayTesting
import Testing

/// After a request the HTTP decoder takes for an upgrade (`Upgrade` header, or
/// `CONNECT`) it parses no more: the gateway answers it and closes, instead of
/// keeping the connection open and buffering whatever follows.
@Suite(.timeLimit(.minutes(1)))
struct UpgradeRequestTests {
    static let upgrade = "GET http://127.0.0.1:9/ HTTP/1.1\r\nHost: 127.0.0.1:9\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n"

    @Test func anUpgradeRequestRefusedWith407IsAnsweredThenClosed() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.proxyAuth = ProxyAuthConfig(realm: "gateway", users: [ProxyUser(username: "u", password: Secret(source: .env("GATEWAY_TEST_PROXY_PASSWORD"), value: "p-upgrade"))])
        }
        defer { Task { try? await gateway.stop() } }
        let client = try await gateway.rawConnection()
        try await client.send(Self.upgrade)
        // The flood that used to be buffered without limit.
        try? await client.send(String(repeating: "\0", count: 256 * 1024))
        let bytes = try await client.receive(timeout: .seconds(10))
        let response = try #require(RawResponse(bytes))
        #expect(response.status == 407)
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(await client.waitForClose(timeout: .seconds(5)), "the connection must close after the 407")
    }

    @Test func aForwardedUpgradeRequestClosesAfterItsResponse() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let client = try await gateway.rawConnection()
        try await client.send(Self.upgrade.replacingOccurrences(of: "127.0.0.1:9", with: "127.0.0.1:\(upstream.port)").replacingOccurrences(of: "/ HTTP", with: "/echo HTTP"))
        let bytes = try await client.receive(timeout: .seconds(10))
        let response = try #require(RawResponse(bytes))
        #expect(response.status == 200)
        #expect(response.header("Connection")?.lowercased() == "close")
        #expect(await client.waitForClose(timeout: .seconds(5)))
    }
}
