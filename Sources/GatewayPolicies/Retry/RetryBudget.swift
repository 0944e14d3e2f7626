import NIOConcurrencyHelpers

/// Retry budgets per upstream (as Envoy's `retry_budget` and Finagle's
/// `RetryBudget`): retries may add only a bounded share of load, so a failing
/// upstream is not hit by a retry storm. Long-lived: survives config reloads.
///
/// The exact rule, per upstream: over the last second (a sliding window of ten
/// 100 ms buckets, the current one included),
///
///     retries ≤ max(min_per_second, percent / 100 × requests)
///
/// where `requests` counts client requests (first attempts) to the upstream and
/// `retries` counts retries granted. A retry is granted only if it keeps the
/// inequality true; the check and the count happen atomically under one lock,
/// so concurrent requests cannot overdraw the budget. A refused retry is not
/// counted: the request returns its last response or error as-is.
public final class RetryBudgets: Sendable {
    private let budgets = NIOLockedValueBox([String: RetryBudget]())

    public init() {}

    /// `upstream`'s budget, made on first use. A route resolves it once per
    /// config load, so a request touches only its upstream's own lock.
    public func budget(for upstream: String) -> RetryBudget {
        budgets.withLockedValue { budgets in
            if let budget = budgets[upstream] { return budget }
            let budget = RetryBudget()
            budgets[upstream] = budget
            return budget
        }
    }
}

/// One upstream's retry budget (see ``RetryBudgets`` for the rule): its window
/// behind its own lock, which the check and the count share.
public final class RetryBudget: Sendable {
    /// Nil until the first request or retry, whose time starts the window.
    private let window = NIOLockedValueBox<SlidingWindow?>(nil)

    /// Counts a client request (once per request, not per attempt).
    public func recordRequest(now: ContinuousClock.Instant) {
        window.withLockedValue { window in
            if window == nil { window = SlidingWindow(start: now) }
            window!.add(requests: 1, retries: 0, now: now)
        }
    }

    /// Grants and counts one retry if the budget allows it.
    public func tryRetry(percent: Double, minPerSecond: Double, now: ContinuousClock.Instant) -> Bool {
        window.withLockedValue { window in
            if window == nil { window = SlidingWindow(start: now) }
            let (requests, retries) = window!.totals(now: now)
            let allowed = Swift.max(minPerSecond, percent / 100 * Double(requests))
            guard Double(retries + 1) <= allowed else { return false }
            window!.add(requests: 0, retries: 1, now: now)
            return true
        }
    }
}

/// Request and retry counts over the last second in ten 100 ms buckets.
struct SlidingWindow: Sendable {
    static let bucketCount = 10
    static let bucketWidth: Duration = .milliseconds(100)

    private var requests = [Int](repeating: 0, count: bucketCount)
    private var retries = [Int](repeating: 0, count: bucketCount)
    /// Start of bucket index 0's era; bucket i covers [start + k·width, ...).
    private let start: ContinuousClock.Instant
    /// The absolute index (since `start`) of the newest bucket in use.
    private var newest: Int64 = 0

    init(start: ContinuousClock.Instant) {
        self.start = start
    }

    mutating func add(requests: Int, retries: Int, now: ContinuousClock.Instant) {
        let slot = advance(to: now)
        self.requests[slot] += requests
        self.retries[slot] += retries
    }

    mutating func totals(now: ContinuousClock.Instant) -> (requests: Int, retries: Int) {
        _ = advance(to: now)
        return (requests.reduce(0, +), retries.reduce(0, +))
    }

    /// Clears buckets that fell out of the window; returns the slot for `now`.
    private mutating func advance(to now: ContinuousClock.Instant) -> Int {
        let index = Swift.max(Self.absoluteIndex(of: now, since: start), newest)
        let stale = Swift.min(index - newest, Int64(Self.bucketCount))
        if stale > 0 {
            for k in 1...stale {
                let slot = Int((newest + k) % Int64(Self.bucketCount))
                requests[slot] = 0
                retries[slot] = 0
            }
            newest = index
        }
        return Int(index % Int64(Self.bucketCount))
    }

    private static func absoluteIndex(of now: ContinuousClock.Instant, since start: ContinuousClock.Instant) -> Int64 {
        let elapsed = now - start
        guard elapsed > .zero else { return 0 }
        return Int64(elapsed / bucketWidth)
    }
}
