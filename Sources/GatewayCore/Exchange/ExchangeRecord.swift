import Synchronization

/// What happened during one client exchange, filled in by the layers it crosses
/// (upstream attempts with their timings) and read at the end by logging,
/// metrics and traces. Shared between tasks of one exchange, hence a lock: a
/// `Mutex` stored in the object, so that a record is one allocation (its
/// first attempt is inline too, see ``AttemptList``).
public final class ExchangeRecord: Sendable {
    private struct State {
        var attempts = AttemptList()
        var upstreamName: String?
    }

    private let state = Mutex(State())

    public init() {}

    /// Starts recording a new attempt; returns its index for `updateAttempt`.
    public func beginAttempt(_ timings: AttemptTimings) -> Int {
        state.withLock { s in
            s.attempts.append(timings)
            return s.attempts.count - 1
        }
    }

    public func updateAttempt(_ index: Int, _ update: (inout AttemptTimings) -> Void) {
        state.withLock { s in
            guard s.attempts.indices.contains(index) else { return }
            s.attempts.update(index, update)
        }
    }

    public var attempts: AttemptList { state.withLock { $0.attempts } }

    /// The configured upstream the request matched, if any.
    public var upstreamName: String? {
        get { state.withLock { $0.upstreamName } }
        set { state.withLock { $0.upstreamName = newValue } }
    }
}
