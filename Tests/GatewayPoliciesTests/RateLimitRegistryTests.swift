import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOPosix
import Testing

/// Per-endpoint limiters are bounded (`RateLimitRegistry.maxLimiters`): an API
/// with more endpoint shapes than that (or a client inventing paths) cannot grow
/// the registry without limit.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitRegistryTests {
    /// Holds by `host:port`: found while they last, gone after (the table
    /// empties, and requests then skip the lock and the lookup entirely).
    @Test func holdsLastUntilTheirEndAndAreThenForgotten() {
        let clock = ManualClock()
        let registry = RateLimitRegistry()
        #expect(registry.hold(authority: "api.test:443", now: clock.now) == nil)
        registry.extendHold(authority: "api.test:443", until: clock.now + .seconds(2), now: clock.now)
        #expect(registry.hold(authority: "api.test:443", now: clock.now) == clock.now + .seconds(2))
        #expect(registry.hold(authority: "other.test:443", now: clock.now) == nil)
        // A shorter hold does not shorten it; a longer one extends it.
        registry.extendHold(authority: "api.test:443", until: clock.now + .seconds(1), now: clock.now)
        #expect(registry.hold(authority: "api.test:443", now: clock.now) == clock.now + .seconds(2))
        clock.advance(by: .seconds(2))
        #expect(registry.hold(authority: "api.test:443", now: clock.now) == nil)
        // Forgotten: a new hold is found again.
        registry.extendHold(authority: "api.test:443", until: clock.now + .seconds(3), now: clock.now)
        #expect(registry.hold(authority: "api.test:443", now: clock.now) == clock.now + .seconds(3))
    }

    @Test func beyondTheCapNewEndpointsShareTheUpstreamLimiterUntilIdleOnesAreForgotten() throws {
        let clock = ManualClock()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let registry = RateLimitRegistry()
        // Four tokens a second, burst 1: a spent bucket is full again after 250 ms.
        let config = RateLimitConfig(requestsPerSecond: 4, burst: 1, maxQueue: 0, perEndpoint: true)
        // No per-upstream bound below the registry's own (that one is `endpointsBeyondTheMetricsBoundShareOneBucket`'s).
        let policy = try #require(RateLimitPolicy(
            upstream: upstreamConfig(rateLimit: config), registry: registry, maxEndpoints: .max, events: RecordingEvents(), clock: clock
        ))
        let step = policy.step
        /// 200 when the request may go, else the local answer's status.
        func status(_ path: String) -> UInt {
            var request = ProxyRequest.test(path: path)
            switch step.prepare(&request, context: .test(), on: loop) {
            case .proceed: return 200
            case .respond(let response): return response.status.code
            case .wait(let wait):
                wait.cancel()
                return 0
            }
        }

        // Fill the registry with limiters that are all busy (each spent its token).
        // "e12x" is not an identifier, so every path is an endpoint of its own.
        for index in 0..<RateLimitRegistry.maxLimiters {
            #expect(status("/e\(index)x") == 200)
        }
        #expect(status("/e7x") == 429)

        // Full and nothing idle: new endpoints share the upstream's limiter (one token).
        #expect(status("/new-a") == 200)
        #expect(status("/new-b") == 429)

        // Half a second later every bucket is full again, but the registry looked
        // for idle limiters less than `sweepInterval` ago: still shared.
        clock.advance(by: .milliseconds(500))
        #expect(status("/new-c") == 200)
        #expect(status("/new-d") == 429)

        // Past the interval, idle limiters are forgotten and new endpoints get their own.
        clock.advance(by: .milliseconds(600))
        #expect(status("/new-e") == 200)
        #expect(status("/new-f") == 200)
        #expect(status("/new-e") == 429)
    }
}
