import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// A rate-limit policy is built once per upstream when its route is
/// built (config load or reload), bound to that upstream's `rate_limit` and to
/// the limiter the registry resolved for it then; every step made from it
/// shares that limiter, and nothing is looked up by name per request.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitBindingTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    static let oneToken = RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 0)

    func admitted(_ step: any AttemptStep) -> Bool {
        var request = ProxyRequest.test()
        if case .proceed = step.prepare(&request, context: .test(), on: loop) { return true }
        return false
    }

    @Test func anUpstreamWithoutRateLimitGetsNoPolicy() {
        #expect(RateLimitPolicy(upstream: upstreamConfig(rateLimit: nil), registry: RateLimitRegistry()) == nil)
        #expect(RateLimitPolicy(upstream: upstreamConfig(retry: RetryConfig()), registry: RateLimitRegistry()) == nil)
    }

    @Test func itsStepsShareTheLimiterResolvedWhenBuilt() throws {
        let clock = ManualClock()
        let policy = try #require(RateLimitPolicy(upstream: upstreamConfig("a", rateLimit: Self.oneToken), registry: RateLimitRegistry(), clock: clock))
        #expect(policy.upstream == "a" && policy.config == Self.oneToken)
        #expect(admitted(policy.step))
        // The step took the only token: another step of the policy answers from the same bucket.
        var request = ProxyRequest.test(upstream: nil)
        guard case .respond(let response) = policy.step.prepare(&request, context: .test(), on: loop) else {
            Issue.record("expected the local 429")
            return
        }
        #expect(response.status == .tooManyRequests)
    }

    @Test func upstreamsAreLimitedByTheirOwnSettingsWhateverTheRequestSays() throws {
        let registry = RateLimitRegistry()
        let clock = ManualClock()
        let a = try #require(RateLimitPolicy(upstream: upstreamConfig("a", rateLimit: Self.oneToken), registry: registry, clock: clock)).step
        let b = try #require(RateLimitPolicy(upstream: upstreamConfig("b", rateLimit: RateLimitConfig(requestsPerSecond: 1, burst: 3, maxQueue: 0)), registry: registry, clock: clock)).step
        #expect([admitted(a), admitted(a)] == [true, false])
        #expect([admitted(b), admitted(b), admitted(b), admitted(b)] == [true, true, true, false])
        #expect(registry.queueDepth(upstream: "a") == 0 && registry.queueDepth(upstream: "b") == 0)
    }

    /// A reload builds the policy again: unchanged settings keep the registry's
    /// limiter (and its spent tokens), changed ones get a new limiter.
    @Test func aReloadRebindsTheSettingsAndKeepsAnUnchangedLimiter() throws {
        let registry = RateLimitRegistry()
        let clock = ManualClock()
        let first = try #require(RateLimitPolicy(upstream: upstreamConfig("a", rateLimit: Self.oneToken), registry: registry, clock: clock))
        #expect(admitted(first.step))
        let same = try #require(RateLimitPolicy(upstream: upstreamConfig("a", rateLimit: Self.oneToken), registry: registry, clock: clock))
        #expect(!admitted(same.step), "the unchanged limiter kept its spent token across the reload")
        let raised = RateLimitConfig(requestsPerSecond: 1, burst: 2, maxQueue: 0)
        let changed = try #require(RateLimitPolicy(upstream: upstreamConfig("a", rateLimit: raised), registry: registry, clock: clock))
        #expect(changed.config == raised)
        #expect([admitted(changed.step), admitted(changed.step), admitted(changed.step)] == [true, true, false])
        #expect(!admitted(first.step), "a route built before the reload keeps the limiter it was built with")
    }
}
