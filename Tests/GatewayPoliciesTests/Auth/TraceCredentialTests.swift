import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOEmbedded
import NIOHTTP1
import Testing

/// TRACE is forwarded without credentials (RFC 9110 §9.3.8:
/// the upstream echoes the request, credential included).
@Suite(.timeLimit(.minutes(1)))
struct TraceCredentialTests {
    @Test func staticCredentialsAreNotInjectedIntoTrace() throws {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: .bearer(token: Secret(source: .env("T"), value: "tok-trace-1"))))]
        let policy = try #require(AuthInjectionPolicy(upstream: config.upstreams[0]))
        var trace = ProxyRequest(method: .TRACE, scheme: .https, host: "api.test", port: 443, target: "/", headers: ["Host": "api.test"], upstreamName: "api")
        #expect(!policy.isInScope(trace))
        policy.inject(into: &trace)
        #expect(!trace.headers.contains(name: "Authorization"))
        var get = trace
        get.method = .GET
        policy.inject(into: &get)
        #expect(get.headers["Authorization"] == ["Bearer tok-trace-1"], "control")
    }

    @Test func oauth2TokensAreNotSentWithTrace() throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let policy = f.policy(f.makeStore())
        var trace = paymentsRequest(method: .TRACE)
        #expect(!policy.isInScope(trace))
        guard case .proceed = policy.step.prepare(&trace, context: testContext(), on: EmbeddedEventLoop()) else {
            Issue.record("a TRACE goes on at once"); return
        }
        #expect(!trace.headers.contains(name: "Authorization"))
        #expect(f.authority.tokenCallCount == 0)
    }
}
