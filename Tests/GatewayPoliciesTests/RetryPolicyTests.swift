import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

/// The retry policy's rules through the planner the exchange asks: what is
/// retried, how long it waits, and when it stops (attempts, `Retry-After`
/// beyond `max_wait`, the deadline). The exchange's side (discarding,
/// backoff on the loop, per-try timeouts, a body sent again) is in
/// ExchangeAttemptTests and ExchangeBodyReplayTests.
@Suite(.timeLimit(.minutes(1)))
struct RetryPolicyTests {
    func policy(_ retry: RetryConfig, rateLimit: RateLimitConfig? = nil, clock: ManualClock = ManualClock(), events: RecordingEvents = RecordingEvents()) throws -> RetryPolicy {
        try #require(RetryPolicy(upstream: upstreamConfig(retry: retry, rateLimit: rateLimit), budgets: RetryBudgets(), events: events, clock: clock, random: LockedRandomSource(seed: 1)))
    }

    /// The run of a request the planner retries.
    func run(_ planner: any RetryPlanner, _ request: ProxyRequest = .test()) throws -> RetryRun {
        guard case .retrying(let run) = planner.begin(request) else { throw PlanError.single }
        return run
    }

    enum PlanError: Error { case single }

    func isRetried(_ planner: any RetryPlanner, _ request: ProxyRequest) -> Bool {
        if case .retrying = planner.begin(request) { return true }
        return false
    }

    @Test func listedErrorsAndStatusesAreRetriedAndCounted() throws {
        let events = RecordingEvents()
        let planner = try policy(quickRetry(), events: events).planner
        var run = try run(planner)
        #expect(planner.retry(after: GatewayError(.connectFailed, "refused"), run: &run, context: .test()) != nil)
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: [:], run: &run, context: .test()) != nil)
        #expect(run.attempts == 3)
        #expect(events.retries == ["connect_failed", "status_503"])
    }

    @Test func afterTheLastAttemptTheOutcomeGoesBack() throws {
        let planner = try policy(quickRetry(attempts: 3)).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .badGateway, headers: [:], run: &run, context: .test()) != nil)
        #expect(planner.retry(afterStatus: .badGateway, headers: [:], run: &run, context: .test()) != nil)
        #expect(planner.retry(afterStatus: .badGateway, headers: [:], run: &run, context: .test()) == nil)
        #expect(planner.retry(after: GatewayError(.connectionReset, "reset"), run: &run, context: .test()) == nil)
    }

    @Test func onlyConfiguredConditionsAreRetried() throws {
        let planner = try policy(quickRetry()).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .internalServerError, headers: [:], run: &run, context: .test()) == nil)
        #expect(planner.retry(after: GatewayError(.pinMismatch, "pin"), run: &run, context: .test()) == nil)
        let connectOnly = try policy(quickRetry(on: [.connectFailure])).planner
        var other = try self.run(connectOnly)
        #expect(connectOnly.retry(after: GatewayError(.connectionReset, "reset"), run: &other, context: .test()) == nil)
        #expect(connectOnly.retry(after: GatewayError(.connectFailed, "refused"), run: &other, context: .test()) != nil)
    }

    @Test func anUpstreamWithoutRetryConfigGetsNoPolicy() {
        #expect(RetryPolicy(upstream: upstreamConfig(retry: nil), budgets: RetryBudgets()) == nil)
        #expect(RetryPolicy(upstream: upstreamConfig(retry: nil, rateLimit: RateLimitConfig()), budgets: RetryBudgets()) == nil)
    }

    /// A policy is bound to its upstream's settings when the route is
    /// built; the request's `upstreamName` is never looked up (the route chose the policy).
    @Test func eachUpstreamsPolicyAppliesTheSettingsItWasBuiltWith() throws {
        let budgets = RetryBudgets()
        let twice = try #require(RetryPolicy(upstream: upstreamConfig("a", retry: quickRetry(attempts: 2)), budgets: budgets, clock: ManualClock()))
        let four = try #require(RetryPolicy(upstream: upstreamConfig("b", retry: quickRetry(attempts: 4)), budgets: budgets, clock: ManualClock()))
        #expect(twice.upstream == "a" && twice.config.attempts == 2)
        #expect(four.upstream == "b" && four.config.attempts == 4)
        for name in ["a", "b", "elsewhere", nil] as [String?] {
            #expect(try run(twice.planner, .test(upstream: name)).maxAttempts == 2, "upstreamName \(name ?? "nil")")
            #expect(try run(four.planner, .test(upstream: name)).maxAttempts == 4, "upstreamName \(name ?? "nil")")
        }
    }

    @Test func postIsRetriedOnlyWithIdempotencyKeyOrOptIn() throws {
        let body = ProxyBody.bytes(ByteBuffer(string: "order"))
        let planner = try policy(quickRetry()).planner
        #expect(!isRetried(planner, .test(.POST, body: body)))
        #expect(isRetried(planner, .test(.POST, headers: ["Idempotency-Key": "abc-123"], body: body)))
        var optIn = quickRetry()
        optIn.retryNonIdempotent = true
        #expect(isRetried(try policy(optIn).planner, .test(.PATCH, body: body)))
    }

    @Test func retryAfterWithinMaxWaitIsTheWait() throws {
        var retry = quickRetry()
        retry.backoffBase = .seconds(60)
        retry.backoffMax = .seconds(60)
        let planner = try policy(retry).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .tooManyRequests, headers: ["Retry-After": "3"], run: &run, context: .test()) == .seconds(3))
    }

    @Test func retryAfterAsDateInThePastRetriesNow() throws {
        let clock = ManualClock(secondsSince1970: 784_111_777 + 60)  // a minute after Sun, 06 Nov 1994 08:49:37 GMT
        var retry = quickRetry()
        retry.backoffBase = .seconds(60)
        let planner = try policy(retry, clock: clock).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: ["Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT"], run: &run, context: .test()) == .zero)
    }

    @Test func retryAfterBeyondMaxWaitReturnsTheUpstreamResponse() throws {
        let planner = try policy(quickRetry(), rateLimit: RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10))).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .tooManyRequests, headers: ["Retry-After": "11"], run: &run, context: .test()) == nil)
        #expect(run.attempts == 1)
    }

    @Test func aResponseMadeByTheGatewayIsNotRetried() throws {
        let planner = try policy(quickRetry()).planner
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .tooManyRequests, headers: ["X-Gateway-Error": "local_rate_limit"], run: &run, context: .test()) == nil)
    }

    @Test func backoffWaitsFollowTheSeededJitter() throws {
        let planner = try policy(RetryConfig(attempts: 3, backoffBase: .seconds(1), backoffMax: .seconds(10))).planner
        let expected = LockedRandomSource(seed: 1)
        let first = Backoff.fullJitter(retry: 0, base: .seconds(1), max: .seconds(10), unit: expected.nextUnit())
        let second = Backoff.fullJitter(retry: 1, base: .seconds(1), max: .seconds(10), unit: expected.nextUnit())
        var run = try run(planner)
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: [:], run: &run, context: .test()) == first)
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: [:], run: &run, context: .test()) == second)
        #expect(first <= .seconds(1) && second <= .seconds(2))
    }

    @Test func aTimedOutAttemptIsRetriedUnderItsPerTryTimeout() throws {
        var retry = quickRetry()
        retry.perTryTimeout = .seconds(2)
        let events = RecordingEvents()
        let planner = try policy(retry, events: events).planner
        var run = try run(planner)
        #expect(run.perTryTimeout == .seconds(2))
        #expect(planner.retry(after: GatewayError(.requestTimeout, "slow"), run: &run, context: .test()) != nil)
        #expect(events.retries == ["request_timeout"])
    }

    @Test func theDeadlineStopsRetrying() throws {
        let clock = ManualClock()
        var retry = quickRetry()
        retry.deadline = .seconds(3)
        let planner = try policy(retry, clock: clock).planner
        var run = try run(planner)
        #expect(run.deadline == clock.now + .seconds(3))
        clock.advance(by: .seconds(2))
        #expect(planner.retry(after: GatewayError(.requestTimeout, "slow"), run: &run, context: .test()) != nil)
        clock.advance(by: .seconds(1))
        #expect(planner.retry(after: GatewayError(.requestTimeout, "slow"), run: &run, context: .test()) == nil)
    }
}
