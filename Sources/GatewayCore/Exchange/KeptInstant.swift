/// A clock instant kept as a ``StoredInstant`` (its projected value), read
/// and written as the clock's (``AttemptTimings``' phases, a retry run's deadline).
@propertyWrapper
public struct KeptInstant: Sendable, Equatable {
    public var projectedValue: StoredInstant?

    /// None yet: what a property declared without a value starts as.
    public init() {
        projectedValue = nil
    }

    public init(wrappedValue: ContinuousClock.Instant?) {
        projectedValue = nil
        self.wrappedValue = wrappedValue
    }

    public var wrappedValue: ContinuousClock.Instant? {
        get { projectedValue.instant }
        set { projectedValue.instant = newValue }
    }
}
