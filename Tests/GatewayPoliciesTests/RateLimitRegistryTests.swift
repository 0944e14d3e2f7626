import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Testing

/// Per-endpoint limiters are bounded (`RateLimitRegistry.maxLimiters`): an API
/// with more endpoint shapes than that (or a client inventing paths) cannot grow
/// the registry without limit.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitRegistryTests {
    @Test func beyondTheCapNewEndpointsShareTheUpstreamLimiterUntilIdleOnesAreForgotten() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        let registry = RateLimitRegistry()
        // Four tokens a second, burst 1: a spent bucket is full again after 250 ms.
        let config = RateLimitConfig(requestsPerSecond: 4, burst: 1, maxQueue: 0, perEndpoint: true)
        let policy = try #require(RateLimitPolicy(upstream: upstreamConfig(rateLimit: config), registry: registry, events: RecordingEvents(), clock: clock))
        func status(_ path: String) async throws -> UInt {
            try await policy.handle(.test(path: path), context: .test(), next: upstream).status.code
        }

        // Fill the registry with limiters that are all busy (each spent its token).
        // "e12x" is not an identifier, so every path is an endpoint of its own.
        for index in 0..<RateLimitRegistry.maxLimiters {
            #expect(try await status("/e\(index)x") == 200)
        }
        #expect(try await status("/e7x") == 429)

        // Full and nothing idle: new endpoints share the upstream's limiter (one token).
        #expect(try await status("/new-a") == 200)
        #expect(try await status("/new-b") == 429)

        // Half a second later every bucket is full again, but the registry looked
        // for idle limiters less than `sweepInterval` ago: still shared.
        clock.advance(by: .milliseconds(500))
        #expect(try await status("/new-c") == 200)
        #expect(try await status("/new-d") == 429)

        // Past the interval, idle limiters are forgotten and new endpoints get their own.
        clock.advance(by: .milliseconds(600))
        #expect(try await status("/new-e") == 200)
        #expect(try await status("/new-f") == 200)
        #expect(try await status("/new-e") == 429)
    }
}
