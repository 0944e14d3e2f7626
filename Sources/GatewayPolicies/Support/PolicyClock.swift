import Foundation

/// The time source of the retry and rate-limit policies: a monotonic `Clock`
/// (deadlines, backoff sleeps, token refill) plus wall time (HTTP-date
/// `Retry-After`, epoch rate-limit resets).
///
/// Injected so tests drive time by hand (``ManualClock``) instead of sleeping.
/// Instants are `ContinuousClock.Instant`s, the same type as the request
/// context's timestamps. Every sleep is cancellable: a task cancelled while it
/// sleeps (the client went away) wakes at once with `CancellationError`.
public protocol PolicyClock: Clock where Instant == ContinuousClock.Instant, Duration == Swift.Duration {
    /// Wall-clock time in seconds since 1970-01-01 00:00:00 UTC.
    var secondsSince1970: Double { get }
}

extension PolicyClock {
    /// Sleeps `duration` on this clock (`Task.sleep(for:clock:)`); returns at
    /// once for a zero or negative duration. Throws `CancellationError` when cancelled.
    public func sleep(for duration: Swift.Duration) async throws {
        guard duration > .zero else {
            try Task.checkCancellation()
            return
        }
        try await Task.sleep(for: duration, clock: self)
    }
}

/// The real clock: `ContinuousClock` for time, `Date` for the wall.
public struct SystemPolicyClock: PolicyClock {
    public typealias Instant = ContinuousClock.Instant
    public typealias Duration = Swift.Duration

    public init() {}

    public var now: ContinuousClock.Instant { ContinuousClock.now }
    public var minimumResolution: Swift.Duration { ContinuousClock().minimumResolution }
    public var secondsSince1970: Double { Date().timeIntervalSince1970 }

    public func sleep(until deadline: ContinuousClock.Instant, tolerance: Swift.Duration?) async throws {
        try await ContinuousClock().sleep(until: deadline, tolerance: tolerance)
    }
}
