public import GatewayConfig
public import GatewayCore
import Logging
public import NIOHTTP1

/// Per upstream attempt: keeps requests within the upstream's limits, per its
/// `rate_limit` config, bound when its route is built (upstreams without one have no such policy).
///
/// 1. Upstream holds (`honor_upstream`): after a response with `RateLimit` /
///    `RateLimit-*` / `X-RateLimit-*` saying nothing remains, or a 429/503 with
///    `Retry-After`, further requests to the same `host:port` wait until the
///    reset instead of being sent into a 429. Holds are per `host:port`, not
///    per upstream: one host's answer does not stop the upstream's other hosts.
///    A hold is never longer than `max_wait`: an announced pause beyond it
///    (`Retry-After: 86400`) is not kept at all, so later requests go to the
///    upstream and the client gets the upstream's own answer (its 429 and
///    `Retry-After`) instead of being held. More than `max_queue` requests
///    holding: 429 at once.
/// 2. Local token bucket (`requests_per_second`, `burst`; one per upstream, or
///    per endpoint with `per_endpoint`): requests over the rate wait in a FIFO
///    queue of at most `max_queue`; beyond it, or when the expected wait exceeds
///    `max_wait`, the client gets 429 with `Retry-After` (seconds, rounded up)
///    and `X-Gateway-Error: local_rate_limit`.
///
/// Waiting does not count against the retry policy's `per_try_timeout`
/// (``AttemptTimer``), and a cancelled request (client gone) leaves at once.
/// The 429 is returned, not thrown, so it carries `Retry-After`; the retry
/// policy never retries it (it has `X-Gateway-Error`).
public struct RateLimitPolicy: GatewayPolicy {
    /// The upstream this policy is bound to.
    public let upstream: String
    /// Its `rate_limit` settings.
    public let config: RateLimitConfig
    /// Its endpoint templates (for `per_endpoint` limiters).
    let endpoints: [EndpointTemplate]
    /// The upstream-wide limiter, resolved when the route is built (nil with
    /// `per_endpoint`, or without a rate); its step shares it.
    let limiter: RateLimiter?
    let registry: RateLimitRegistry
    let events: any GatewayEvents
    let clock: any PolicyClock

    /// The rate-limit policy of `upstream`, or nil when it has no `rate_limit`
    /// (its chain leaves the policy out). Built once per config load, with the route.
    public init?(
        upstream: UpstreamConfig,
        registry: RateLimitRegistry,
        events: any GatewayEvents = NoGatewayEvents(),
        clock: any PolicyClock = SystemPolicyClock()
    ) {
        guard let config = upstream.rateLimit else { return nil }
        self.upstream = upstream.name
        self.config = config
        self.endpoints = upstream.endpoints
        self.registry = registry
        self.events = events
        self.clock = clock
        if let parameters = Self.parameters(config), !config.perEndpoint {
            limiter = registry.limiter(upstream: upstream.name, endpoint: nil, parameters: parameters, clock: clock, events: events)
        } else {
            limiter = nil
        }
    }

    static func parameters(_ config: RateLimitConfig) -> RateLimiter.Parameters? {
        guard let rate = config.requestsPerSecond, rate > 0 else { return nil }
        return RateLimiter.Parameters(requestsPerSecond: rate, burst: config.burst, maxQueue: config.maxQueue, maxWait: config.maxWait)
    }

    /// The limiter `request` takes a token from: the upstream's, or (with
    /// `per_endpoint`) its endpoint's from the registry; nil without a rate.
    func limiter(for request: ProxyRequest) -> RateLimiter? {
        if let limiter { return limiter }
        guard config.perEndpoint, let parameters = Self.parameters(config) else { return nil }
        let endpoint = RateLimitEndpoint.key(method: request.method.rawValue, path: request.path, templates: endpoints)
        return registry.limiter(upstream: upstream, endpoint: endpoint, parameters: parameters, clock: clock, events: events)
    }

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        let authority = request.hostPort
        if config.honorUpstream, let refusal = try await waitForUpstreamHold(authority: authority) {
            return refusal
        }
        if let limiter = limiter(for: request) {
            let admission: RateLimiter.Admission
            do {
                admission = try await AttemptTimer.paused { try await limiter.acquire() }
            } catch var error as GatewayError {
                // The shared bucket's 503 (`on_unavailable: fail`) names host:port, as every gateway error.
                error.upstream = authority
                throw error
            }
            if case .rejected(let retryAfter) = admission {
                context.logger.debug("local rate limit", metadata: ["upstream": "\(upstream)", "retry_after": "\(retryAfter)"])
                return refuse(authority: authority, wait: retryAfter, why: "the gateway's rate limit for this upstream is exhausted")
            }
        }
        let response = try await next.handle(request, context: context)
        if config.honorUpstream {
            observe(status: response.status, headers: response.headers, authority: authority, logger: context.logger)
        }
        return response
    }

    /// Waits while `authority` asked for a pause; a 429 response when too many
    /// wait already. A hold beyond `max_wait` (kept from before a reload that
    /// lowered it) is not waited for: the upstream answers.
    private func waitForUpstreamHold(authority: String) async throws -> ProxyResponse? {
        while let until = registry.hold(authority: authority, now: clock.now) {
            let wait = until - clock.now
            guard wait <= config.maxWait else { return nil }
            guard registry.queueDepth(upstream: upstream) < config.maxQueue else {
                return refuse(authority: authority, wait: wait, why: "the upstream asked for a pause until its rate limit resets")
            }
            registry.adjustDepth(upstream: upstream, by: 1, events: events)
            defer { registry.adjustDepth(upstream: upstream, by: -1, events: events) }
            try await AttemptTimer.paused { try await clock.sleep(until: until, tolerance: nil) }
        }
        return nil
    }

    /// The local 429: `Retry-After` in whole seconds (rounded up), `X-Gateway-Error: local_rate_limit`.
    /// `authority` (`host:port`) is the error body's `upstream`, as in every gateway error.
    func refuse(authority: String, wait: Duration, why: String) -> ProxyResponse {
        events.rateLimited(upstream: upstream, source: "local")
        let error = GatewayError(.localRateLimit, "too many requests: \(why)", upstream: authority)
        return error.response(extraHeaders: ["Retry-After": RetryAfter.headerValue(for: wait)])
    }

    /// Learns holds of `authority` from the upstream's answer; one longer than
    /// `max_wait` is not kept (the response goes to the client as it is).
    func observe(status: HTTPResponseStatus, headers: HTTPHeaders, authority: String, logger: Logger) {
        let now = clock.now
        let wall = clock.secondsSince1970
        let status = status.code
        var hold: Duration?
        if status == 429 || status == 503, let value = headers.first(name: "retry-after") {
            hold = RetryAfter.parse(value, secondsSince1970: wall)
        }
        if let signal = UpstreamRateLimitSignal.parse(headers, secondsSince1970: wall), let signalHold = signal.hold {
            hold = Swift.max(hold ?? .zero, signalHold)
        }
        if status == 429 || (status == 503 && hold != nil) {
            events.rateLimited(upstream: upstream, source: "upstream")
        }
        guard let hold, hold > .zero else { return }
        guard hold <= config.maxWait else {
            logger.debug(
                "upstream asked for a pause longer than max_wait; not holding requests",
                metadata: ["upstream": "\(upstream)", "authority": "\(authority)", "pause_s": "\(hold.seconds)"]
            )
            return
        }
        registry.holdEverywhere(authority: authority, for: hold, now: now)
    }
}
