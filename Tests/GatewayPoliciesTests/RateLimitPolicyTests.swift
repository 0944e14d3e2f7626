import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOPosix
import Testing

/// The rate-limit policy's rules, through its attempt step: the local bucket's
/// FIFO queue on a manual clock (the limiter's pump), and the upstream's holds
/// per `host:port` on an embedded loop's clock (the step's scheduled pause).
@Suite(.timeLimit(.minutes(1)))
struct RateLimitPolicyTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    func step(_ config: RateLimitConfig, clock: ManualClock, events: RecordingEvents = RecordingEvents(), registry: RateLimitRegistry = RateLimitRegistry()) throws -> any AttemptStep {
        try #require(RateLimitPolicy(upstream: upstreamConfig(rateLimit: config), registry: registry, events: events, clock: clock)).step
    }

    func prepare(_ step: any AttemptStep, _ request: ProxyRequest = .test(), on eventLoop: (any EventLoop)? = nil) -> AttemptStepDecision {
        var request = request
        return step.prepare(&request, context: .test(), on: eventLoop ?? loop)
    }

    /// Shows `step` the head of the upstream's answer to `request`.
    func answer(_ step: any AttemptStep, _ status: HTTPResponseStatus, headers: HTTPHeaders, to request: ProxyRequest = .test()) {
        let head = UpstreamResponseHead(status: status, headers: headers, declaredLength: 0, hasBody: false)
        _ = step.responseHead(head, of: request, context: .test(), mayReplay: false, on: loop)
    }

    func isProceed(_ decision: AttemptStepDecision) -> Bool {
        if case .proceed = decision { return true }
        return false
    }

    @Test func requestsOverTheRateWaitTheirTurnInOrder() async throws {
        let clock = ManualClock()
        let events = RecordingEvents()
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1), clock: clock, events: events)
        #expect(isProceed(prepare(step)))
        guard case .wait(let second) = prepare(step, .test(path: "/2")) else { Issue.record("expected a wait"); return }
        await clock.waitForSleepers(1)  // the limiter's pump waits for the next token
        guard case .wait(let third) = prepare(step, .test(path: "/3")) else { Issue.record("expected a wait"); return }
        let thirdDone = NIOLockedValueBox(false)
        third.future.whenComplete { _ in thirdDone.withLockedValue { $0 = true } }
        #expect(events.depths.last == 2)
        clock.advance(by: .seconds(1))
        _ = try await second.future.get()
        #expect(!thirdDone.withLockedValue { $0 }, "one token a second, first come first served")
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = try await third.future.get()
        #expect(events.depths.last == 0)
    }

    @Test func queueOverflowGets429WithRetryAfter() async throws {
        let clock = ManualClock()
        let events = RecordingEvents()
        let step = try step(RateLimitConfig(requestsPerSecond: 0.5, burst: 1, maxQueue: 1), clock: clock, events: events)
        #expect(isProceed(prepare(step)))
        guard case .wait(let queued) = prepare(step) else { Issue.record("expected a wait"); return }
        await clock.waitForSleepers(1)
        guard case .respond(let refused) = prepare(step) else { Issue.record("expected the local 429"); return }
        #expect(refused.status.code == 429)
        #expect(refused.headers.first(name: "retry-after") == "4")
        #expect(refused.headers.first(name: "x-gateway-error") == "local_rate_limit")
        #expect(events.rateLimited == ["local"])
        clock.advance(by: .seconds(2))
        _ = try await queued.future.get()
    }

    @Test func aWithdrawnWaiterLeavesTheQueueAndTheOneBehindMovesUp() async throws {
        let clock = ManualClock()
        let registry = RateLimitRegistry()
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 2), clock: clock, registry: registry)
        #expect(isProceed(prepare(step)))
        guard case .wait(let leaving) = prepare(step, .test(path: "/leaving")) else { Issue.record("expected a wait"); return }
        await clock.waitForSleepers(1)
        guard case .wait(let staying) = prepare(step, .test(path: "/staying")) else { Issue.record("expected a wait"); return }
        #expect(registry.queueDepth(upstream: "api") == 2)
        leaving.cancel()
        await #expect(throws: CancellationError.self) { try await leaving.future.get() }
        #expect(registry.queueDepth(upstream: "api") == 1)
        clock.advance(by: .seconds(1))
        _ = try await staying.future.get()
        #expect(registry.queueDepth(upstream: "api") == 0)
    }

    @Test func perEndpointBucketsAreIndependent() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 0, perEndpoint: true), clock: ManualClock())
        #expect(isProceed(prepare(step, .test(path: "/users/1"))))
        #expect(isProceed(prepare(step, .test(path: "/orders"))))
        // /users/2 is the same endpoint as /users/1 (ids collapse).
        guard case .respond(let refused) = prepare(step, .test(path: "/users/2")) else { Issue.record("expected the local 429"); return }
        #expect(refused.status.code == 429)
    }

    /// Per-endpoint limiters are bounded as the metrics' endpoints are
    /// (`metrics.max_endpoints_per_upstream`): the endpoints beyond share one
    /// bucket (and so one shared bucket row), not one each.
    @Test func endpointsBeyondTheMetricsBoundShareOneBucket() throws {
        let config = RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 0, perEndpoint: true)
        let step = try #require(RateLimitPolicy(
            upstream: upstreamConfig(rateLimit: config), registry: RateLimitRegistry(), maxEndpoints: 2, clock: ManualClock()
        )).step
        #expect(isProceed(prepare(step, .test(path: "/a"))))
        #expect(isProceed(prepare(step, .test(path: "/b"))))
        // A third and a fourth endpoint: one bucket between them, whose one token the third took.
        #expect(isProceed(prepare(step, .test(path: "/c"))))
        guard case .respond(let refused) = prepare(step, .test(path: "/d")) else { Issue.record("expected the local 429"); return }
        #expect(refused.status.code == 429)
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

    @Test func upstreamRemainingZeroHoldsFurtherRequestsUntilTheReset() throws {
        let clock = ManualClock()
        let embedded = EmbeddedEventLoop()
        let step = try step(RateLimitConfig(requestsPerSecond: nil), clock: clock)
        answer(step, .ok, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "5"])
        guard case .wait(let held) = prepare(step, on: embedded) else { Issue.record("expected the hold"); return }
        let done = NIOLockedValueBox(false)
        held.future.whenComplete { _ in done.withLockedValue { $0 = true } }
        embedded.advanceTime(by: .milliseconds(4999))
        #expect(!done.withLockedValue { $0 })
        embedded.advanceTime(by: .milliseconds(1))
        #expect(done.withLockedValue { $0 })
        clock.advance(by: .seconds(5))
        #expect(isProceed(prepare(step, on: embedded)), "the step looks again: the hold is over")
    }

    /// A pause beyond `max_wait` is not kept: the next
    /// request goes to the upstream, and the client gets the upstream's own 429.
    @Test func aHoldBeyondMaxWaitIsNotKeptTheUpstreamAnswers() throws {
        let events = RecordingEvents()
        let step = try step(RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10)), clock: ManualClock(), events: events)
        answer(step, .tooManyRequests, headers: ["Retry-After": "86400"])
        #expect(isProceed(prepare(step)), "nothing held for a day")
        answer(step, .tooManyRequests, headers: ["RateLimit": "limit=10, remaining=0, reset=30"])
        #expect(isProceed(prepare(step)))
        #expect(events.rateLimited == ["upstream", "upstream"])
    }

    /// Holds are per host:port, so one host's pause does not
    /// stop the upstream's other hosts (or ports).
    @Test func holdsAreKeyedByHostAndPortNotUpstream() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10)), clock: ManualClock())
        var a = ProxyRequest.test()
        a.host = "a.example.com"
        var b = a
        b.host = "b.example.com"
        var otherPort = a
        otherPort.port = 8080
        answer(step, .tooManyRequests, headers: ["Retry-After": "5"], to: a)
        #expect(isProceed(prepare(step, b)), "another host of the upstream is not held")
        #expect(isProceed(prepare(step, otherPort)), "another port is not held")
        guard case .wait(let held) = prepare(step, a) else { Issue.record("the host that asked for a pause is held"); return }
        held.cancel()
    }

    @Test func honorUpstreamOffIgnoresTheHeaders() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: nil, honorUpstream: false), clock: ManualClock())
        answer(step, .ok, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "5"])
        #expect(isProceed(prepare(step)))
    }
}
