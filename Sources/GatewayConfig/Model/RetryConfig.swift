/// `upstreams[i].retry`: when and how often a failed request is tried again.
/// Retries happen only when safe (idempotent method or `Idempotency-Key`,
/// body fully buffered, no response byte sent to the client yet).
public struct RetryConfig: Sendable, Equatable {
    /// `attempts`: total tries including the first; >= 1 (1 = no retries).
    public var attempts: Int
    /// `backoff.base`: full jitter, sleep uniformly in [0, min(max, base·2ⁿ)].
    public var backoffBase: Duration
    /// `backoff.max`: upper bound of one backoff sleep; >= base.
    public var backoffMax: Duration
    /// `on`: which failures are retried.
    public var on: Set<RetryCondition>
    /// `budget.percent`: retries may add at most this percentage (0...100) of
    /// the upstream's recent requests...
    public var budgetPercent: Double
    /// `budget.min_per_second`: ...but this many retries per second are always allowed.
    public var budgetMinPerSecond: Double
    /// `buffer_limit`: request bodies up to this many bytes are buffered so
    /// they can be sent again; larger ones stream and are not retried.
    public var bufferLimit: Int
    /// `per_try_timeout`: one attempt's limit; nil = only the pool's timeouts.
    public var perTryTimeout: Duration?
    /// `deadline`: limit for all attempts and backoff together; nil = none.
    public var deadline: Duration?
    /// `retry_non_idempotent`: also retry POST/PATCH without `Idempotency-Key`.
    public var retryNonIdempotent: Bool

    public static let defaultOn: Set<RetryCondition> = [
        .connectFailure, .reset, .timeout, .status(502), .status(503), .status(504), .status(429),
    ]
    /// The largest `buffer_limit`: buffered bodies live in memory.
    public static let maxBufferLimit = 1024 * 1024 * 1024

    /// The documented defaults: 3 attempts, backoff 100ms..5s, on
    /// connect-failure/reset/timeout/502/503/504/429, budget 20% with 5/s
    /// minimum, 1 MiB buffer, no per-try timeout or deadline.
    public init() {
        self.init(attempts: 3)
    }

    public init(
        attempts: Int = 3,
        backoffBase: Duration = .milliseconds(100),
        backoffMax: Duration = .seconds(5),
        on: Set<RetryCondition> = RetryConfig.defaultOn,
        budgetPercent: Double = 20,
        budgetMinPerSecond: Double = 5,
        bufferLimit: Int = 1024 * 1024,
        perTryTimeout: Duration? = nil,
        deadline: Duration? = nil,
        retryNonIdempotent: Bool = false
    ) {
        self.attempts = attempts
        self.backoffBase = backoffBase
        self.backoffMax = backoffMax
        self.on = on
        self.budgetPercent = budgetPercent
        self.budgetMinPerSecond = budgetMinPerSecond
        self.bufferLimit = bufferLimit
        self.perTryTimeout = perTryTimeout
        self.deadline = deadline
        self.retryNonIdempotent = retryNonIdempotent
    }
}

/// One `retry.on` entry: `connect-failure`, `reset`, `timeout` or an HTTP
/// status code (400...599). `description` is the YAML spelling, fit for a
/// metric label.
public enum RetryCondition: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The TCP connect (or TLS handshake) failed; nothing reached the upstream.
    case connectFailure
    /// The connection was reset or closed before a complete response head.
    case reset
    /// No response head within the (per-try) timeout.
    case timeout
    /// The upstream answered with this status.
    case status(Int)

    public static let validStatuses = 400...599

    /// Parses the YAML spelling; nil for anything else (including statuses
    /// outside 400...599).
    public init?(_ text: String) {
        switch text {
        case "connect-failure": self = .connectFailure
        case "reset": self = .reset
        case "timeout": self = .timeout
        default:
            guard text.count == 3, text.allSatisfy(\.isASCIIDigit), let code = Int(text),
                RetryCondition.validStatuses.contains(code)
            else { return nil }
            self = .status(code)
        }
    }

    public var description: String {
        switch self {
        case .connectFailure: "connect-failure"
        case .reset: "reset"
        case .timeout: "timeout"
        case .status(let code): String(code)
        }
    }

    /// Failures first (in the order above), then statuses ascending.
    public static func < (lhs: RetryCondition, rhs: RetryCondition) -> Bool {
        func rank(_ condition: RetryCondition) -> Int {
            switch condition {
            case .connectFailure: 0
            case .reset: 1
            case .timeout: 2
            case .status(let code): 3 + code
            }
        }
        return rank(lhs) < rank(rhs)
    }
}
