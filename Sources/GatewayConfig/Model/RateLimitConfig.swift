/// `upstreams[i].rate_limit`: a local token bucket for the upstream (or for
/// each of its endpoints), and whether the upstream's own rate-limit headers
/// (`Retry-After`, `RateLimit-*`, `X-RateLimit-*`) hold requests back.
public struct RateLimitConfig: Sendable, Equatable {
    /// `requests_per_second`: the bucket's refill rate; nil = no local limit.
    public var requestsPerSecond: Double?
    /// `burst`: the bucket's size, >= 1; default max(1, ⌈requests_per_second⌉).
    public var burst: Int
    /// `max_queue`: requests waiting for a token; beyond that the client gets
    /// 429 with `X-Gateway-Error: local_rate_limit`. 0 = never queue.
    public var maxQueue: Int
    /// `max_wait`: the longest a request waits (for a token, or for an
    /// upstream's `Retry-After` / reset); longer gets 429 / the upstream's answer.
    public var maxWait: Duration
    /// `honor_upstream`: obey `Retry-After`, `RateLimit`/`RateLimit-Policy`
    /// and `X-RateLimit-Limit/Remaining/Reset`.
    public var honorUpstream: Bool
    /// `per_endpoint`: one bucket per endpoint (method + path template)
    /// instead of one for the whole upstream.
    public var perEndpoint: Bool

    public static let defaultMaxQueue = 100
    public static let defaultMaxWait: Duration = .seconds(10)

    /// No local limit; upstream headers honored; queue 100, wait 10s.
    public init() {
        self.init(requestsPerSecond: nil)
    }

    /// `burst` nil means max(1, ⌈requestsPerSecond⌉).
    public init(
        requestsPerSecond: Double?,
        burst: Int? = nil,
        maxQueue: Int = RateLimitConfig.defaultMaxQueue,
        maxWait: Duration = RateLimitConfig.defaultMaxWait,
        honorUpstream: Bool = true,
        perEndpoint: Bool = false
    ) {
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst ?? RateLimitConfig.defaultBurst(requestsPerSecond: requestsPerSecond)
        self.maxQueue = maxQueue
        self.maxWait = maxWait
        self.honorUpstream = honorUpstream
        self.perEndpoint = perEndpoint
    }

    /// max(1, ⌈rate⌉): a bucket holds at least one second's worth of requests.
    public static func defaultBurst(requestsPerSecond: Double?) -> Int {
        guard let rate = requestsPerSecond, rate.isFinite, rate > 1 else { return 1 }
        return rate >= Double(Int.max / 2) ? Int.max / 2 : Int(rate.rounded(.up))
    }
}
