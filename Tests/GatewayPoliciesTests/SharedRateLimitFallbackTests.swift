import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOPosix
import Testing

/// A shared bucket whose database does not answer, with `on_unavailable:
/// fail`: the step answers 503 `shared_state_unavailable`, naming the
/// request's `host:port`, and no request reaches the upstream.
@Suite(.timeLimit(.minutes(1)))
struct SharedRateLimitFallbackTests {
    struct UnreachableDatabase: SharedRateLimits {
        var fallback: SharedStateFallback { .fail }
        var isAvailable: Bool { false }
        func leaseSize(rate: Double, burst: Int) -> Int { 1 }
        func lease(bucket key: String, rate: Double, burst: Int, want: Int) async throws -> TokenLease {
            throw SharedStateUnavailable("unreachable")
        }
        func publishHold(authority: String, duration: Duration) {}
    }

    let loop = MultiThreadedEventLoopGroup.singleton.next()
    static let limit = RateLimitConfig(requestsPerSecond: 10, burst: 10)

    @Test func theStepAnswers503NamingHostAndPort() async throws {
        let policy = try #require(RateLimitPolicy(upstream: upstreamConfig(rateLimit: Self.limit), registry: RateLimitRegistry(shared: UnreachableDatabase())))
        var request = ProxyRequest.test()
        guard case .respond(let response) = policy.step.prepare(&request, context: .test(), on: loop) else {
            Issue.record("expected a response")
            return
        }
        #expect(response.status.code == 503)
        #expect(response.headers.first(name: "X-Gateway-Error") == "shared_state_unavailable")
        let body = try await response.body.collect(upTo: 4096)
        #expect(String(buffer: body).contains(#""upstream":"api.example.com:80""#), "\(String(buffer: body))")
    }
}
