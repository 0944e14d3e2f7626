import GatewayCore

/// A token bucket: `rate` tokens per second flow in up to `capacity`; a request
/// takes one. Pure value, no clock of its own: callers pass `now`.
public struct TokenBucket: Sendable, Equatable {
    public let rate: Double
    public let capacity: Double
    public private(set) var tokens: Double
    /// Kept as a ``StoredInstant``: the bucket is copied in and out of its
    /// limiter's state on every request, as plain words.
    private var updated: StoredInstant
    /// Leased: tokens come only from ``deposit(_:)`` (a lease of a bucket the
    /// gateway replicas share), not with time; `rate` still estimates waits.
    public private(set) var isLeased = false

    /// Starts full (a burst is available at once).
    public init(rate: Double, capacity: Int, now: ContinuousClock.Instant) {
        precondition(rate > 0 && rate.isFinite, "rate must be positive")
        self.rate = rate
        self.capacity = Double(Swift.max(1, capacity))
        self.tokens = self.capacity
        self.updated = StoredInstant(now)
    }

    /// Switches between leased and local tokens. A leased bucket starts
    /// empty: tokens earned locally (a new limiter's burst, an outage) are not
    /// spent on top of the shared bucket, so each replica holds at most one
    /// lease of unspent tokens. A local one refills from `now`.
    public mutating func setLeased(_ leased: Bool, now: ContinuousClock.Instant) {
        guard leased != isLeased else { return }
        if leased { tokens = 0 } else { updated = StoredInstant(now) }
        isLeased = leased
    }

    /// Adds leased tokens.
    public mutating func deposit(_ count: Int) {
        tokens += Double(Swift.max(0, count))
    }

    /// Adds the tokens that flowed in since the last update (none when leased).
    public mutating func refill(now: ContinuousClock.Instant) {
        let now = StoredInstant(now)
        guard !isLeased, updated < now else { return }
        tokens = Swift.min(capacity, tokens + (now - updated).seconds * rate)
        updated = now
    }

    /// Takes one token if there is one.
    public mutating func take(now: ContinuousClock.Instant) -> Bool {
        refill(now: now)
        guard tokens >= 1 - Self.epsilon else { return false }
        tokens = Swift.max(0, tokens - 1)
        return true
    }

    /// How long until `count` tokens are available (zero if they are now).
    public func timeUntil(_ count: Double, now: ContinuousClock.Instant) -> Duration {
        var copy = self
        copy.refill(now: now)
        let missing = count - copy.tokens
        guard missing > Self.epsilon else { return .zero }
        // Round up to the nanosecond so a sleeper never wakes a hair too early.
        return .nanoseconds(Int64((missing / rate * 1e9).rounded(.up)))
    }

    /// Full and untouched for a while: safe to forget (a leased bucket
    /// always is: forgetting it only leaves its leased tokens unused).
    public func isFull(now: ContinuousClock.Instant) -> Bool {
        if isLeased { return true }
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity - Self.epsilon
    }

    static let epsilon = 1e-9
}
