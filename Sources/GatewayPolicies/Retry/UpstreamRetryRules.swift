import GatewayConfig
import GatewayCore
import Logging

/// One upstream's retry settings and the decision both paths share (the async
/// ``RetryPolicy`` and the exchange's ``UpstreamRetryPlanner``): after an
/// attempt that may be retried, how long to wait before the next one, or nil
/// when the outcome goes to the client as it is.
struct UpstreamRetryRules: Sendable {
    let upstream: String
    let retry: RetryConfig
    /// Use a 429/503's `Retry-After` instead of the backoff (`rate_limit.honor_upstream`).
    let honorRetryAfter: Bool
    /// A `Retry-After` beyond this (`rate_limit.max_wait`) is not waited for.
    let maxRetryAfter: Duration

    init(_ upstream: UpstreamConfig, retry: RetryConfig) {
        self.upstream = upstream.name
        self.retry = retry
        self.honorRetryAfter = upstream.rateLimit?.honorUpstream ?? true
        self.maxRetryAfter = upstream.rateLimit?.maxWait ?? RateLimitConfig.defaultMaxWait
    }

    /// True when the request may be sent more than once (body aside).
    func isSafeToRetry(_ request: ProxyRequest) -> Bool {
        request.isIdempotent || retry.retryNonIdempotent || request.headers.contains(name: "idempotency-key")
    }

    /// The wait before retry number `retryIndex` (0 before the second attempt)
    /// for `decision`, or nil: not retryable, `Retry-After` beyond `max_wait`,
    /// the deadline would pass, or the retry budget is spent. A retry it allows
    /// is counted (budget, `gateway_retries_total`) and logged at debug.
    func wait(
        after decision: RetryDecision,
        retryIndex: Int,
        maxAttempts: Int,
        deadline: ContinuousClock.Instant?,
        services: RetryServices,
        logger: Logger
    ) -> Duration? {
        guard case .retry(let reason, let retryAfter) = decision else { return nil }
        let delay: Duration
        if let retryAfter {
            guard retryAfter <= maxRetryAfter else {
                logger.debug("not retrying: Retry-After exceeds max_wait", metadata: ["upstream": "\(upstream)", "retry_after": "\(retryAfter)"])
                return nil
            }
            delay = retryAfter
        } else {
            delay = Backoff.fullJitter(retry: retryIndex, base: retry.backoffBase, max: retry.backoffMax, unit: services.random.nextUnit())
        }
        let now = services.clock.now
        if let deadline, now + delay >= deadline {
            logger.debug("not retrying: the deadline would pass", metadata: ["upstream": "\(upstream)"])
            return nil
        }
        guard services.budget.tryRetry(percent: retry.budgetPercent, minPerSecond: retry.budgetMinPerSecond, now: now) else {
            logger.debug("not retrying: retry budget exhausted", metadata: ["upstream": "\(upstream)", "reason": "\(reason)"])
            return nil
        }
        services.events.retry(upstream: upstream, reason: reason)
        logger.debug(
            "retrying",
            metadata: ["upstream": "\(upstream)", "attempt": "\(retryIndex + 2)/\(maxAttempts)", "reason": "\(reason)", "delay_ms": "\(Int64(delay.seconds * 1000))"]
        )
        return delay
    }
}

/// What retries share across requests: the upstream's budget, metrics, the clock and the jitter source.
struct RetryServices: Sendable {
    /// The upstream's own budget, resolved when its route is built.
    let budget: RetryBudget
    let events: any GatewayEvents
    let clock: any PolicyClock
    let random: any RandomSource
}
