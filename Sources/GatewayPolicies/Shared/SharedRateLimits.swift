/// Rate-limit state every replica shares: token buckets, of which each
/// replica leases a few tokens at a time, and the pauses upstreams asked for.
public protocol SharedRateLimits: Sendable {
    var fallback: SharedStateFallback { get }

    /// Whether the database answered lately (limiters go local, or refuse,
    /// while it does not).
    var isAvailable: Bool { get }

    /// Tokens one lease takes from a bucket of `rate` per second and `burst`.
    func leaseSize(rate: Double, burst: Int) -> Int

    /// Takes up to `want` tokens from the shared bucket `key` (created full
    /// with `burst` tokens, refilled at `rate`). Throws ``SharedStateUnavailable``.
    func lease(bucket key: String, rate: Double, burst: Int, want: Int) async throws -> TokenLease

    /// Tells the other replicas that `authority` (`host:port`) asked for a pause of `duration`.
    func publishHold(authority: String, duration: Duration)
}

/// Tokens taken from a shared bucket.
public struct TokenLease: Sendable, Equatable {
    /// Tokens granted (0 when the bucket is empty).
    public var granted: Int
    /// With none granted: when the bucket has its next token.
    public var nextTokenIn: Duration

    public init(granted: Int, nextTokenIn: Duration) {
        self.granted = granted
        self.nextTokenIn = nextTokenIn
    }
}
