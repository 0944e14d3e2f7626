/// The decisions of one local rate limiter, without I/O (tested without
/// sleeping): a token bucket and a bounded FIFO queue of waiting requests.
///
/// - A request that finds nobody waiting and a token in the bucket proceeds.
/// - Otherwise it joins the queue, unless the queue holds `maxQueue` requests
///   already or its expected wait (its position's token, at the bucket's rate)
///   exceeds `maxWait`: then it is rejected with that expected wait as the
///   `Retry-After`.
/// - Tokens go to waiters strictly in arrival order (`grant`); a waiter that
///   leaves (cancelled) is removed and those behind it move up.
public struct RateLimitQueue: Sendable {
    public enum Admission: Sendable, Equatable {
        case proceed
        case wait
        case reject(retryAfter: Duration)
    }

    public private(set) var bucket: TokenBucket
    public let maxQueue: Int
    public let maxWait: Duration
    private var waiters: [Int] = []

    public init(requestsPerSecond: Double, burst: Int, maxQueue: Int, maxWait: Duration, now: ContinuousClock.Instant) {
        self.bucket = TokenBucket(rate: requestsPerSecond, capacity: burst, now: now)
        self.maxQueue = Swift.max(0, maxQueue)
        self.maxWait = maxWait
    }

    /// Requests waiting now.
    public var depth: Int { waiters.count }

    public mutating func arrive(_ id: Int, now: ContinuousClock.Instant) -> Admission {
        if waiters.isEmpty, bucket.take(now: now) { return .proceed }
        // This request needs the (depth + 1)-th token from now.
        let expected = bucket.timeUntil(Double(waiters.count + 1), now: now)
        guard waiters.count < maxQueue, expected <= maxWait else {
            return .reject(retryAfter: Swift.max(expected, bucket.timeUntil(1, now: now)))
        }
        waiters.append(id)
        return .wait
    }

    /// Removes a waiter that gave up; false if it was not waiting (already granted).
    public mutating func cancel(_ id: Int) -> Bool {
        guard let index = waiters.firstIndex(of: id) else { return false }
        waiters.remove(at: index)
        return true
    }

    /// Hands the available tokens to the waiters at the head; returns them in order.
    public mutating func grant(now: ContinuousClock.Instant) -> [Int] {
        var granted: [Int] = []
        while let head = waiters.first, bucket.take(now: now) {
            granted.append(head)
            waiters.removeFirst()
        }
        return granted
    }

    /// Tokens in hand (leased, or flowed in).
    public func available(now: ContinuousClock.Instant) -> Bool {
        var copy = bucket
        copy.refill(now: now)
        return copy.tokens >= 1 - TokenBucket.epsilon
    }

    /// See ``TokenBucket/setLeased(_:now:)``.
    public mutating func setLeased(_ leased: Bool, now: ContinuousClock.Instant) {
        bucket.setLeased(leased, now: now)
    }

    /// Adds leased tokens (then ``grant(now:)`` hands them out).
    public mutating func deposit(_ count: Int) {
        bucket.deposit(count)
    }

    /// Removes every waiter (they are refused); returns them in order.
    public mutating func removeAll() -> [Int] {
        defer { waiters.removeAll() }
        return waiters
    }

    /// When the head waiter's token will be there; nil with nobody waiting.
    public func nextGrant(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard !waiters.isEmpty else { return nil }
        return now + bucket.timeUntil(1, now: now)
    }

    /// Nobody waiting and the bucket full: forgetting this limiter changes nothing.
    public func isIdle(now: ContinuousClock.Instant) -> Bool {
        waiters.isEmpty && bucket.isFull(now: now)
    }
}
