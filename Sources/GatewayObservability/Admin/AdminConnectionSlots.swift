import NIOConcurrencyHelpers

/// The admin listener's open connections against its cap: the accept loop
/// takes a slot for each new connection, or is told to close it at once when
/// `limit` are open (counted); the connection's task gives its slot back when
/// the connection ends. Only the accept loop takes slots, so the count it sees
/// is never over the cap.
final class AdminConnectionSlots: Sendable {
    private struct State {
        var open = 0
        var refused = 0
    }

    /// Open admin connections at most.
    let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = limit
    }

    /// Open admin connections now.
    var open: Int { state.withLockedValue { $0.open } }

    /// What became of a new connection.
    enum Admission: Equatable {
        /// It holds a slot: give it back with ``release()`` when it ends.
        case admitted
        /// `limit` connections are open: close it. `total`: refused so far, this one included.
        case refused(total: Int)
    }

    /// Takes a slot for a new connection if one is free.
    func take() -> Admission {
        state.withLockedValue { s in
            guard s.open >= limit else {
                s.open += 1
                return .admitted
            }
            s.refused += 1
            return .refused(total: s.refused)
        }
    }

    /// Gives back the slot of a connection that ended.
    func release() {
        state.withLockedValue { $0.open -= 1 }
    }
}
