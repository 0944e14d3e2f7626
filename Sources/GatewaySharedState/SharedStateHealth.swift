import NIOConcurrencyHelpers

/// Whether the shared database answered lately: every operation reports its
/// outcome here. Read on the event loops (a lock held for nanoseconds).
public final class SharedStateHealth: Sendable {
    public struct Status: Sendable, Equatable {
        public var available: Bool
        /// Why the last operation failed (short, no secrets).
        public var lastError: String?
        /// Operations failed since the database last answered.
        public var failuresSinceSuccess: Int
        /// The tables exist (this process ran the migrations).
        public var migrated: Bool
    }

    private let status = NIOLockedValueBox(Status(available: false, lastError: "not connected yet", failuresSinceSuccess: 0, migrated: false))

    public init() {}

    public var current: Status { status.withLockedValue { $0 } }
    /// The database answered the last operation, and the tables exist.
    public var isAvailable: Bool { status.withLockedValue { $0.available && $0.migrated } }
    var isMigrated: Bool { status.withLockedValue { $0.migrated } }

    func markMigrated() {
        status.withLockedValue { $0.migrated = true }
    }

    /// Returns whether the database was unavailable before (it is back).
    @discardableResult
    public func recordSuccess() -> Bool {
        status.withLockedValue { s in
            let wasDown = !s.available
            s.available = true
            s.lastError = nil
            s.failuresSinceSuccess = 0
            return wasDown
        }
    }

    public func recordFailure(_ reason: String) {
        status.withLockedValue { s in
            s.available = false
            s.lastError = reason
            s.failuresSinceSuccess += 1
        }
    }
}
