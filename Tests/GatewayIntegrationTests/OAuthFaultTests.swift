import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// A 401 injected toward the gateway's policies on an OAuth2 upstream (issue
/// 55): the gateway's own token refresh runs (once), the request is replayed
/// with the new token and the client never sees the 401; the injected 401
/// never reached the upstream and is counted as a fault, not as its error.
@Suite(.timeLimit(.minutes(2)))
struct OAuthFaultTests {
    @Test func anInjected401MakesTheGatewayRefreshItsToken() async throws {
        let f = try await OAuthTests.Fixture.start()
        let gateway = try await GatewayHarness.start { config in
            f.configure(&config)
            let expired = FaultRule(endpoint: EndpointTemplate("GET /custom/orders")!, every: 2, toward: .policies, action: .error(FaultResponse(status: 401)))
            config.upstreams[1].faults = FaultsConfig(seed: 5, rules: [expired])
        }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        func get(_ path: String) async throws -> String {
            try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test\(path)"]).stdoutString
        }
        #expect(try await get("/custom/orders") == "200", "\(gateway.logs.text)")
        let tokenBefore = f.authority.issuedAccessTokens.last
        #expect(f.authority.tokenCallCount == 1, "the token of the first request")

        // The second matching call gets the injected 401: the gateway refreshes and replays.
        #expect(try await get("/custom/orders") == "200", "the client never sees the 401: \(gateway.logs.text)")
        #expect(f.authority.tokenCallCount == 2, "one refresh")
        let tokens = f.protected.receivedRequests.map { $0.header("Authorization") }
        #expect(tokens.count == 2, "the injected 401 never reached the upstream: \(tokens.count)")
        #expect(tokens.last == "Bearer \(f.authority.issuedAccessTokens.last ?? "")" && f.authority.issuedAccessTokens.last != tokenBefore, "replayed with the new token")

        let metrics = try await OAuthTests.metrics(gateway)
        #expect(metrics.contains(#"gateway_token_refreshes_total{upstream="payments",trigger="401",result="success"} 1"#), "\(metrics)")
        #expect(FaultInjectionTests.lines(metrics, "gateway_faults_injected_total{").contains { $0.contains("upstream=\"payments\"") && $0.contains("kind=\"error\"") && $0.hasSuffix(" 1") }, "\(metrics)")
        #expect(!FaultInjectionTests.lines(metrics, "gateway_requests_total{").contains { $0.contains("status_class=\"4xx\"") && !$0.hasSuffix(" 0") }, "not the upstream's 401")
    }
}
