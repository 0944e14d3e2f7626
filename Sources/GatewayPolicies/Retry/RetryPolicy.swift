public import GatewayConfig
public import GatewayCore

/// Retries a client request against its upstream, per the upstream's `retry`
/// config (one policy per upstream that has one, bound to it when its route is
/// built), only when that is safe:
///
/// - the method is idempotent (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), or the
///   request carries `Idempotency-Key`, or `retry_non_idempotent` is set;
/// - the request body is all in the exchange's copy of it (at most
///   `buffer_limit` bytes, copied as it goes to the first attempt); a larger
///   body goes once and is never retried;
/// - no response byte went to the client: a response is only retried before its
///   head goes to the client; a failure mid-body ends the client connection instead.
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
///
/// This value holds the settings; the exchange applies them through its
/// ``planner`` (``UpstreamRetryPlanner``), on the event loop.
public struct RetryPolicy: Sendable {
    /// The upstream's retry settings, bound when its route is built.
    let rules: UpstreamRetryRules
    let services: RetryServices

    /// The retry policy of `upstream`, or nil when it has no `retry` (its route
    /// has no retry planner). Built once per config load, with the route.
    public init?(
        upstream: UpstreamConfig,
        budgets: RetryBudgets,
        events: any GatewayEvents = NoGatewayEvents(),
        clock: any PolicyClock = SystemPolicyClock(),
        random: any RandomSource = SystemRandomSource()
    ) {
        guard let retry = upstream.retry else { return nil }
        self.rules = UpstreamRetryRules(upstream, retry: retry)
        self.services = RetryServices(budget: budgets.budget(for: upstream.name), events: events, clock: clock, random: random)
    }

    /// The upstream this policy is bound to.
    public var upstream: String { rules.upstream }

    /// The settings it applies (the upstream's `retry`).
    public var config: RetryConfig { rules.retry }

    /// True when the request may be sent more than once (body aside).
    static func isSafeToRetry(_ request: ProxyRequest, retryNonIdempotent: Bool) -> Bool {
        request.isIdempotent || retryNonIdempotent || request.headers.contains(name: "idempotency-key")
    }

    /// The planner the exchange asks before and after each attempt.
    public var planner: any RetryPlanner {
        UpstreamRetryPlanner(rules: rules, services: services)
    }
}
