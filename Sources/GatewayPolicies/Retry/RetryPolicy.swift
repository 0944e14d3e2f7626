public import GatewayConfig
public import GatewayCore
import Logging

/// Retries a client request against its upstream, per the upstream's `retry`
/// config (one policy per upstream that has one, bound to it when its route is
/// built), only when that is safe:
///
/// - the method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), or the
///   request carries `Idempotency-Key`, or `retry_non_idempotent` is set;
/// - the request body is fully buffered (at most `buffer_limit` bytes, see
///   ``ReplayableBody``); a larger body streams once and is never retried;
/// - no response byte went to the client: a response is only retried before this
///   policy returns it; a failure mid-body ends the client connection instead.
///
/// What is retried: errors matching `retry.on` (see ``RetryDecision``) and
/// responses with a listed status (their body is discarded). The wait before
/// retry n is ``Backoff/fullJitter(retry:base:max:unit:)``, or the upstream's
/// `Retry-After` on a 429/503 when `rate_limit.honor_upstream` (default on):
/// a `Retry-After` beyond `rate_limit.max_wait` (default 10s) or the deadline
/// returns the upstream's response untouched. Each attempt runs under
/// `per_try_timeout` and all of them under `deadline`. The upstream's
/// ``RetryBudgets`` caps retries; over budget, the last outcome goes back as-is.
///
/// Every retry is reported (`GatewayEvents.retry(upstream:reason:)`) and each
/// attempt is in `context.record` (the pool records it). Cancellation (the client
/// went away) ends the current attempt or backoff sleep at once: no more retries.
public struct RetryPolicy: GatewayPolicy {
    /// The upstream's retry settings, bound when its route is built.
    let rules: UpstreamRetryRules
    let services: RetryServices

    /// The retry policy of `upstream`, or nil when it has no `retry` (its chain
    /// leaves the policy out). Built once per config load, with the route.
    public init?(
        upstream: UpstreamConfig,
        budgets: RetryBudgets,
        events: any GatewayEvents = NoGatewayEvents(),
        clock: any PolicyClock = SystemPolicyClock(),
        random: any RandomSource = SystemRandomSource()
    ) {
        guard let retry = upstream.retry else { return nil }
        self.rules = UpstreamRetryRules(upstream, retry: retry)
        self.services = RetryServices(budgets: budgets, events: events, clock: clock, random: random)
    }

    /// The upstream this policy is bound to.
    public var upstream: String { rules.upstream }

    /// The settings it applies (the upstream's `retry`).
    public var config: RetryConfig { rules.retry }

    /// True when the request may be sent more than once (body aside).
    static func isSafeToRetry(_ request: ProxyRequest, retryNonIdempotent: Bool) -> Bool {
        request.isIdempotent || retryNonIdempotent || request.headers.contains(name: "idempotency-key")
    }

    /// The direct path's planner: the same rules, decided on the event loop.
    public var planner: any RetryPlanner {
        DirectRetryPlanner(rules: rules, services: services)
    }

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        let name = rules.upstream
        let config = rules.retry
        let clock = services.clock
        let started = clock.now
        let deadline = config.deadline.map { started + $0 }
        services.budgets.recordRequest(upstream: name, now: started)

        var request = request
        var maxAttempts = 1
        if config.attempts > 1, rules.isSafeToRetry(request) {
            let prepared = try await ReplayableBody.prepare(request.body, limit: config.bufferLimit)
            request.body = prepared.body
            if prepared.replayable { maxAttempts = config.attempts }
        }
        let attemptRequest = request

        var attempt = 0
        while true {
            let outcome: Result<ProxyResponse, any Error>
            do {
                outcome = .success(
                    try await AttemptRunner.run(perTryTimeout: config.perTryTimeout, deadline: deadline, clock: clock, upstream: name) {
                        try await next.handle(attemptRequest, context: context)
                    }
                )
            } catch {
                outcome = .failure(error)
            }
            if Task.isCancelled || outcome.isCancellation {
                if case .success(let response) = outcome { response.body.discard() }
                throw CancellationError()
            }
            guard attempt + 1 < maxAttempts else { return try outcome.get() }
            let decision = RetryDecision.evaluate(
                outcome, on: config.on, honorRetryAfter: rules.honorRetryAfter, secondsSince1970: clock.secondsSince1970
            )
            guard let delay = rules.wait(
                after: decision, retryIndex: attempt, maxAttempts: maxAttempts, deadline: deadline, services: services, logger: context.logger
            ) else { return try outcome.get() }
            if case .success(let response) = outcome { response.body.discard() }
            attempt += 1
            try await clock.sleep(for: delay)
        }
    }
}

extension Result where Failure == any Error {
    var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
