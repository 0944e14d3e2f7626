import GatewayCore
import NIOHTTP1

/// The retry policy on the event loop, for one upstream: the same rules as
/// ``RetryPolicy`` (safe methods, `retry.on`, full-jitter backoff or the
/// upstream's `Retry-After` within `max_wait`, the deadline, the budget), decided
/// synchronously on the event loop; the exchange sleeps with a scheduled task.
/// A request body is sent again from the exchange's copy of it, kept up to
/// `buffer_limit` bytes (``RetryRun/bodyLimit``); a larger body goes once and
/// is never retried (its one attempt still runs under `per_try_timeout`).
struct UpstreamRetryPlanner: RetryPlanner {
    let rules: UpstreamRetryRules
    let services: RetryServices

    /// Counts the request in the retry budget.
    func begin(_ request: ProxyRequest) -> RetryPlan {
        let now = services.clock.now
        services.budget.recordRequest(now: now)
        guard rules.retry.attempts > 1, rules.isSafeToRetry(request) else { return .single }
        return .retrying(RetryRun(
            maxAttempts: rules.retry.attempts,
            deadline: rules.retry.deadline.map { now + $0 },
            perTryTimeout: rules.retry.perTryTimeout,
            bodyLimit: rules.retry.bufferLimit
        ))
    }

    func retry(after error: GatewayError, run: inout RetryRun, context: RequestContext) -> Duration? {
        next(RetryDecision.evaluate(error, on: rules.retry.on), run: &run, context: context)
    }

    func considers(status: HTTPResponseStatus) -> Bool {
        rules.retry.on.contains(.status(Int(status.code)))
    }

    func retry(afterStatus status: HTTPResponseStatus, headers: HTTPHeaders, run: inout RetryRun, context: RequestContext) -> Duration? {
        // Most responses are not retryable: decided before the clock is read.
        guard considers(status: status) else { return nil }
        let decision = RetryDecision.evaluate(
            status: status, headers: headers, on: rules.retry.on,
            honorRetryAfter: rules.honorRetryAfter, secondsSince1970: services.clock.secondsSince1970
        )
        return next(decision, run: &run, context: context)
    }

    private func next(_ decision: RetryDecision, run: inout RetryRun, context: RequestContext) -> Duration? {
        guard run.attempts < run.maxAttempts else { return nil }
        guard let delay = rules.wait(
            after: decision, retryIndex: run.attempts - 1, maxAttempts: run.maxAttempts,
            deadline: run.deadline, services: services, logger: context.logger
        ) else { return nil }
        run.attempts += 1
        // For the exchange's spans: the given-up attempt's reason, the backoff's event.
        if case .retry(let reason, _) = decision { context.record.noteRetry(reason: reason, backoff: delay) }
        return delay
    }
}
