import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOHTTP1
import Testing

@Suite(.timeLimit(.minutes(1)))
struct RateLimitPolicyTests {
    func policy(_ config: RateLimitConfig, clock: ManualClock, events: RecordingEvents = RecordingEvents(), registry: RateLimitRegistry = RateLimitRegistry()) throws -> RateLimitPolicy {
        try #require(RateLimitPolicy(upstream: upstreamConfig(rateLimit: config), registry: registry, events: events, clock: clock))
    }

    @Test func requestsOverTheRateWaitTheirTurnInOrder() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        let events = RecordingEvents()
        let policy = try policy(RateLimitConfig(requestsPerSecond: 1, burst: 1), clock: clock, events: events)
        #expect(try await policy.handle(.test(), context: .test(), next: upstream).status == .ok)
        let second = Task { try await policy.handle(.test(path: "/2"), context: .test(), next: upstream) }
        await clock.waitForSleepers(1)  // the limiter's pump waits for the next token
        let third = Task { try await policy.handle(.test(path: "/3"), context: .test(), next: upstream) }
        while events.depths.last != 2 { await Task.yield() }
        #expect(upstream.calls == 1)
        clock.advance(by: .seconds(1))
        _ = try await second.value
        #expect(upstream.calls == 2)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = try await third.value
        #expect(upstream.calls == 3)
        #expect(events.depths.last == 0)
    }

    @Test func queueOverflowGets429WithRetryAfter() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        let events = RecordingEvents()
        let policy = try policy(RateLimitConfig(requestsPerSecond: 0.5, burst: 1, maxQueue: 1), clock: clock, events: events)
        _ = try await policy.handle(.test(), context: .test(), next: upstream)
        let queued = Task { try await policy.handle(.test(), context: .test(), next: upstream) }
        await clock.waitForSleepers(1)
        let refused = try await policy.handle(.test(), context: .test(), next: upstream)
        #expect(refused.status.code == 429)
        #expect(refused.headers.first(name: "retry-after") == "4")
        #expect(refused.headers.first(name: "x-gateway-error") == "local_rate_limit")
        #expect(events.rateLimited == ["local"])
        clock.advance(by: .seconds(2))
        #expect(try await queued.value.status == .ok)
        #expect(upstream.calls == 2)
    }

    @Test func aCancelledWaiterLeavesTheQueueAtOnce() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        let events = RecordingEvents()
        let registry = RateLimitRegistry()
        let policy = try policy(RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 2), clock: clock, events: events, registry: registry)
        _ = try await policy.handle(.test(), context: .test(), next: upstream)
        let leaving = Task { try await policy.handle(.test(path: "/leaving"), context: .test(), next: upstream) }
        await clock.waitForSleepers(1)
        let staying = Task { try await policy.handle(.test(path: "/staying"), context: .test(), next: upstream) }
        while registry.queueDepth(upstream: "api") < 2 { await Task.yield() }
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.value }
        #expect(registry.queueDepth(upstream: "api") == 1)
        // The one behind moved up: it gets the very next token.
        clock.advance(by: .seconds(1))
        #expect(try await staying.value.status == .ok)
        #expect(upstream.calls == 2)
        #expect(registry.queueDepth(upstream: "api") == 0)
    }

    @Test func perEndpointBucketsAreIndependent() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        let policy = try policy(RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 0, perEndpoint: true), clock: clock)
        #expect(try await policy.handle(.test(path: "/users/1"), context: .test(), next: upstream).status == .ok)
        #expect(try await policy.handle(.test(path: "/orders"), context: .test(), next: upstream).status == .ok)
        // /users/2 is the same endpoint as /users/1 (ids collapse).
        #expect(try await policy.handle(.test(path: "/users/2"), context: .test(), next: upstream).status.code == 429)
    }

    @Test func perEndpointKeysAreTheMetricsEndpointTemplates() throws {
        // Same rules as the metrics labels: tokens, UUIDs and long hex become {id}; query dropped.
        #expect(RateLimitEndpoint.key(method: "GET", path: "/files/dGhpcyBpcyBhIHRva2Vu0x?x=1", templates: []) == "GET /files/{id}")
        #expect(RateLimitEndpoint.key(method: "GET", path: "/bot123456:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/send", templates: []) == "GET /{id}/send")
        #expect(RateLimitEndpoint.key(method: "PUT", path: "/users/42/avatar", templates: []) == "PUT /users/{id}/avatar")
        #expect(RateLimitEndpoint.key(method: "GET", path: "/users/me", templates: []) == "GET /users/me")
        let template = try #require(EndpointTemplate("GET /v1/{org}/repos"))
        #expect(RateLimitEndpoint.key(method: "GET", path: "/v1/acme/repos", templates: [template]) == "GET /v1/{org}/repos")
    }

    @Test func upstreamRemainingZeroHoldsFurtherRequestsUntilTheReset() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200, headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "5")]), .status(200)])
        let policy = try policy(RateLimitConfig(requestsPerSecond: nil), clock: clock)
        _ = try await policy.handle(.test(), context: .test(), next: upstream)
        let held = Task { try await policy.handle(.test(), context: .test(), next: upstream) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(4999))
        #expect(upstream.calls == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await held.value.status == .ok)
        #expect(upstream.calls == 2)
    }

    /// Issue 15 item 8: a pause beyond `max_wait` is not kept: the next
    /// request goes to the upstream, and the client gets the upstream's own 429.
    @Test func aHoldBeyondMaxWaitIsNotKeptTheUpstreamAnswers() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(429, headers: [("Retry-After", "86400")]), .status(429, headers: [("RateLimit", "limit=10, remaining=0, reset=30")]), .status(200)])
        let events = RecordingEvents()
        let policy = try policy(RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10)), clock: clock, events: events)
        let first = try await policy.handle(.test(), context: .test(), next: upstream)
        #expect(first.status.code == 429)
        #expect(first.headers.first(name: "retry-after") == "86400", "the upstream's answer, as it is")
        let second = try await policy.handle(.test(), context: .test(), next: upstream)
        #expect(second.status.code == 429)
        #expect(second.headers.first(name: "x-gateway-error") == nil, "the upstream's 429, not a local one")
        #expect(try await policy.handle(.test(), context: .test(), next: upstream).status == .ok, "nothing held for a day")
        #expect(upstream.calls == 3)
        #expect(events.rateLimited == ["upstream", "upstream"])
    }

    /// Issue 15 item 8: holds are per host:port, so one host's pause does not
    /// stop the upstream's other hosts (or ports).
    @Test func holdsAreKeyedByHostAndPortNotUpstream() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(429, headers: [("Retry-After", "5")]), .status(200)])
        let policy = try policy(RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10)), clock: clock)
        var a = ProxyRequest.test()
        a.host = "a.example.com"
        var b = a
        b.host = "b.example.com"
        var otherPort = a
        otherPort.port = 8080
        #expect(try await policy.handle(a, context: .test(), next: upstream).status.code == 429)
        #expect(try await policy.handle(b, context: .test(), next: upstream).status == .ok, "another host of the upstream is not held")
        #expect(try await policy.handle(otherPort, context: .test(), next: upstream).status == .ok, "another port is not held")
        #expect(upstream.calls == 3)
        let held = Task { try await policy.handle(a, context: .test(), next: upstream) }
        await clock.waitForSleepers(1)
        #expect(upstream.calls == 3, "the host that asked for a pause is held")
        clock.advance(by: .seconds(5))
        #expect(try await held.value.status == .ok)
        #expect(upstream.calls == 4)
    }

    @Test func honorUpstreamOffIgnoresTheHeaders() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200, headers: [("X-RateLimit-Remaining", "0"), ("X-RateLimit-Reset", "5")])])
        let policy = try policy(RateLimitConfig(requestsPerSecond: nil, honorUpstream: false), clock: clock)
        _ = try await policy.handle(.test(), context: .test(), next: upstream)
        _ = try await policy.handle(.test(), context: .test(), next: upstream)
        #expect(upstream.calls == 2)
    }

    @Test func queueWaitDoesNotCountAgainstPerTryTimeout() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(200)])
        var retry = quickRetry()
        retry.perTryTimeout = .seconds(1)
        let config = upstreamConfig(retry: retry, rateLimit: RateLimitConfig(requestsPerSecond: 0.25, burst: 1))
        let registry = RateLimitRegistry()
        let chain = PolicyChain(
            policies: [
                try #require(RetryPolicy(upstream: config, budgets: RetryBudgets(), clock: clock)),
                try #require(RateLimitPolicy(upstream: config, registry: registry, clock: clock)),
            ],
            terminal: upstream
        )
        _ = try await chain.handle(.test(), context: .test())
        let queued = Task { try await chain.handle(.test(), context: .test()) }
        while registry.queueDepth(upstream: "api") < 1 { await Task.yield() }
        await clock.waitForSleepers(1)  // the limiter's pump; the per-try timer is paused
        clock.advance(by: .seconds(4))
        #expect(try await queued.value.status == .ok)
        #expect(upstream.calls == 2)
    }
}
