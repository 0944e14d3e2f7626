/// A `ContinuousClock.Instant` kept by value, as its distance from the
/// clock's epoch (a `Duration`, two words).
///
/// `ContinuousClock.Instant` comes from a module built for library evolution
/// and is not frozen: its layout is known only at run time. Every struct
/// holding one is then copied, destroyed and tested (`Optional`) through the
/// runtime's value witnesses, field by field, instead of as plain words. The
/// records an exchange carries (``AttemptTimings``, ``RequestContext``) hold
/// their instants as this and convert where they are read or written.
public struct StoredInstant: Sendable, Hashable, Comparable {
    /// Since `ContinuousClock().systemEpoch`.
    public var sinceEpoch: Duration

    public init(_ instant: ContinuousClock.Instant) {
        sinceEpoch = ContinuousClock().systemEpoch.duration(to: instant)
    }

    /// The clock read now.
    public static var now: StoredInstant { StoredInstant(.now) }

    public var instant: ContinuousClock.Instant {
        ContinuousClock().systemEpoch.advanced(by: sinceEpoch)
    }

    /// From `earlier` to `self`.
    public static func - (later: StoredInstant, earlier: StoredInstant) -> Duration {
        later.sinceEpoch - earlier.sinceEpoch
    }

    public static func < (a: StoredInstant, b: StoredInstant) -> Bool {
        a.sinceEpoch < b.sinceEpoch
    }
}

extension Optional where Wrapped == StoredInstant {
    /// The instant kept, as the clock's.
    public var instant: ContinuousClock.Instant? {
        get { self?.instant }
        set {
            if let newValue { self = StoredInstant(newValue) } else { self = nil }
        }
    }
}
