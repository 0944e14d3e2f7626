/// An upstream attempt given up for another, as the retry planner decided:
/// why, and the backoff before the next one. Recorded on the
/// ``ExchangeRecord`` (``ExchangeRecord/noteRetry(reason:backoff:at:)``) for
/// the spans of the exchange (the attempt's retry reason, the backoff's event).
public struct AttemptRetry: Sendable, Equatable {
    /// The attempt given up: its index in ``ExchangeRecord/attempts``.
    public var attempt: Int
    /// Why, as the `reason` label of `gateway_retries_total`: `connect_failed`, `status_503`, ...
    public var reason: String
    /// When the retry was decided: the backoff starts then.
    public var at: ContinuousClock.Instant {
        get { storedAt.instant }
        set { storedAt = StoredInstant(newValue) }
    }
    private var storedAt: StoredInstant
    /// The wait before the next attempt.
    public var backoff: Duration

    public init(attempt: Int, reason: String, at: ContinuousClock.Instant, backoff: Duration) {
        self.attempt = attempt
        self.reason = reason
        self.storedAt = StoredInstant(at)
        self.backoff = backoff
    }
}
