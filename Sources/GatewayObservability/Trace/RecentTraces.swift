import NIOConcurrencyHelpers

/// The last few trace records, newest last, for the admin page's recent
/// exchanges and its HAR download. Fed by the trace writer thread as it writes
/// each record (never by an event loop); read by the admin listener. Bounded
/// in records, and in body bytes: only bodies up to ``maxBodyBytes`` are kept.
public final class RecentTraces: Sendable {
    /// A written record and, when its curl lines name a body file, that body (if small enough).
    public struct Item: Sendable {
        public let record: TraceRecord
        public let bodyFile: (path: String, bytes: [UInt8])?
    }

    public static let defaultCapacity = 50
    public static let maxBodyBytes = 64 * 1024

    public let capacity: Int
    /// A ring: `items[next]` is the oldest once full.
    private let ring: NIOLockedValueBox<(items: [Item], next: Int)>

    public init(capacity: Int = RecentTraces.defaultCapacity) {
        self.capacity = max(1, capacity)
        ring = NIOLockedValueBox((items: [], next: 0))
    }

    /// Keeps `record` (and its body file's bytes, when at most ``maxBodyBytes``), dropping the oldest when full.
    public func append(_ record: TraceRecord, bodyFile: (path: String, bytes: [UInt8])?) {
        let kept = bodyFile.flatMap { $0.bytes.count <= Self.maxBodyBytes ? $0 : nil }
        let item = Item(record: record, bodyFile: kept)
        // The record it replaces is freed after the lock (a record is many strings).
        let replaced: Item? = ring.withLockedValue { ring in
            if ring.items.count < capacity {
                ring.items.append(item)
                return nil
            }
            var old = item
            swap(&old, &ring.items[ring.next])
            ring.next = (ring.next + 1) % capacity
            return old
        }
        _ = replaced
    }

    /// The kept items, oldest first.
    public var items: [Item] {
        ring.withLockedValue { ring in Array(ring.items[ring.next...] + ring.items[..<ring.next]) }
    }
}
