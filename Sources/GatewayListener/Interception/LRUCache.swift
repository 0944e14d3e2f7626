import NIOConcurrencyHelpers

/// A small thread-safe least-recently-used cache (a lock around a dictionary
/// stamped with a use counter). Eviction scans, which is fine for the sizes it
/// holds (minted leaf certificates: at most a few thousand, evicted rarely).
final class LRUCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry {
        var value: Value
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int) {
        precondition(capacity >= 1, "an LRU cache holds at least one entry")
        self.capacity = capacity
    }

    /// The value for `key`, marked as just used.
    func value(for key: Key) -> Value? {
        state.withLockedValue { state in
            guard var entry = state.entries[key] else { return nil }
            state.clock &+= 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.value
        }
    }

    /// Stores `value`, evicting the least recently used entry when full.
    func insert(_ value: Value, for key: Key) {
        state.withLockedValue { state in
            state.clock &+= 1
            if state.entries[key] == nil, state.entries.count >= capacity,
               let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries.removeValue(forKey: oldest)
            }
            state.entries[key] = Entry(value: value, lastUse: state.clock)
        }
    }

    var count: Int { state.withLockedValue { $0.entries.count } }
}
