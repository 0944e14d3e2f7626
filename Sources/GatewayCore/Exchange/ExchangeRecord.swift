import Synchronization

/// What happened during one client exchange, filled in by the layers it crosses
/// (upstream attempts with their timings, the retry planner's decisions, the
/// exchange's trace context) and read at the end by logging, metrics and
/// traces. Shared between tasks of one exchange, hence a lock: a `Mutex`
/// stored in the object, so that a record is one allocation (its first
/// attempt is inline too, see ``AttemptList``).
public final class ExchangeRecord: Sendable {
    private struct State {
        var attempts = AttemptList()
        var upstreamName: String?
        /// The protocol the client spoke (``UpstreamHTTPVersion/http1Name`` or `http2Name`).
        var clientHTTPVersion = UpstreamHTTPVersion.http1Name
        /// Empty (no allocation) unless a retry was decided.
        var retries: [AttemptRetry] = []
        var trace: (any ExchangeTraceContext)?
        /// Empty (no allocation) unless a fault, mock or replay acted (``Injection``).
        var injections: [Injection] = []
        /// Whether the client's response is the last injection's (not the upstream's).
        var responseInjected = false
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

    /// How many attempts began: the index the next ``beginAttempt(_:)`` returns.
    public var attemptCount: Int { state.withLock { $0.attempts.count } }

    /// The configured upstream the request matched, if any.
    public var upstreamName: String? {
        get { state.withLock { $0.upstreamName } }
        set { state.withLock { $0.upstreamName = newValue } }
    }

    /// The protocol the client spoke: `HTTP/1.1`, or `HTTP/2` on a stream of an
    /// intercepted HTTP/2 connection.
    public var clientHTTPVersion: String {
        get { state.withLock { $0.clientHTTPVersion } }
        set { state.withLock { $0.clientHTTPVersion = newValue } }
    }

    /// The retry planner gave the last attempt up for another, after `backoff`.
    public func noteRetry(reason: String, backoff: Duration, at now: ContinuousClock.Instant = .now) {
        state.withLock { s in
            s.retries.append(AttemptRetry(attempt: max(0, s.attempts.count - 1), reason: reason, at: now, backoff: backoff))
        }
    }

    /// The retries decided so far, in order.
    public var retries: [AttemptRetry] { state.withLock { $0.retries } }

    /// A fault, mock or replayed entry acted on the exchange. `answered`: the
    /// injection is the response (a mocked or made-up one); an attempt that
    /// reaches the upstream afterwards clears that with ``upstreamAnswered()``.
    public func noteInjection(_ injection: Injection, answered: Bool) {
        state.withLock { s in
            s.injections.append(injection)
            if answered { s.responseInjected = true }
        }
    }

    /// An attempt reached the upstream: the response is no longer an injected one.
    public func upstreamAnswered() {
        state.withLock { s in if s.responseInjected { s.responseInjected = false } }
    }

    /// What acted on the exchange, in order.
    public var injections: [Injection] { state.withLock { $0.injections } }

    /// The client's response was made by the gateway in the upstream's place
    /// (a mock, a replayed entry, an injected error): the last of ``injections``.
    public var injectedResponse: Injection? {
        state.withLock { s in s.responseInjected ? s.injections.last : nil }
    }

    /// The exchange's trace context while tracing is on (``ExchangeTraceContext``); nil otherwise.
    public var trace: (any ExchangeTraceContext)? {
        get { state.withLock { $0.trace } }
        set { state.withLock { $0.trace = newValue } }
    }
}
