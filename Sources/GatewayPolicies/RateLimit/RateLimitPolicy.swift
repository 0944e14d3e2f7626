public import GatewayConfig
public import GatewayCore
import Logging
import NIOHTTP1

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
/// The attempt step (``RateLimitStep``) applies it on the event loop; this
/// value holds the upstream's settings and limiter, bound when its route is
/// built. The 429 carries `Retry-After`; the retry planner never retries it
/// (it has `X-Gateway-Error`).
public struct RateLimitPolicy: Sendable {
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
    /// Distinct per-endpoint limiters at most (`metrics.max_endpoints_per_upstream`).
    let maxEndpoints: Int
    let events: any GatewayEvents
    let clock: any PolicyClock

    /// The rate-limit policy of `upstream`, or nil when it has no `rate_limit`
    /// (its route has no rate-limit step). Built once per config load, with the route.
    public init?(
        upstream: UpstreamConfig,
        registry: RateLimitRegistry,
        maxEndpoints: Int = MetricsConfig.defaultMaxEndpointsPerUpstream,
        events: any GatewayEvents = NoGatewayEvents(),
        clock: any PolicyClock = SystemPolicyClock()
    ) {
        guard let config = upstream.rateLimit else { return nil }
        self.maxEndpoints = maxEndpoints
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
        return registry.limiter(upstream: upstream, endpoint: endpoint, maxEndpoints: maxEndpoints, parameters: parameters, clock: clock, events: events)
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
