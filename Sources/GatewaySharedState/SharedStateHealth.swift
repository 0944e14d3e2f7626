import NIOConcurrencyHelpers
import Synchronization

/// Whether the shared database answered lately: every operation reports its
/// outcome here. The limiters ask on every request: that answer is one atomic
/// read, kept in step with the status under its lock.
public final class SharedStateHealth: Sendable {
    public struct Status: Sendable, Equatable {
        public var available: Bool
        /// Why the last operation failed (short, no secrets).
        public var lastError: String?
        /// The tables exist (this process ran the migrations).
        public var migrated: Bool

        /// The database answered the last operation, and the tables exist.
        public var isUsable: Bool { available && migrated }
    }

    private let status = NIOLockedValueBox(Status(available: false, lastError: "not connected yet", migrated: false))
    private let usable = Atomic<Bool>(false)

    public init() {}

    public var current: Status { status.withLockedValue { $0 } }
    /// The database answered the last operation, and the tables exist.
    public var isAvailable: Bool { usable.load(ordering: .acquiring) }
    var isMigrated: Bool { status.withLockedValue { $0.migrated } }

    func markMigrated() {
        update { $0.migrated = true }
    }

    public func recordSuccess() {
        update { s in
            s.available = true
            s.lastError = nil
        }
    }

    public func recordFailure(_ reason: String) {
        update { s in
            s.available = false
            s.lastError = reason
        }
    }

    private func update(_ change: (inout Status) -> Void) {
        status.withLockedValue { s in
            change(&s)
            usable.store(s.isUsable, ordering: .releasing)
        }
    }
}
