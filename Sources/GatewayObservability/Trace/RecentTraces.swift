import Foundation
import NIOConcurrencyHelpers

/// The last few trace records, newest last, for the admin page's recent
/// exchanges and its HAR download. Fed by the trace writer thread as it writes
/// each record (never by an event loop); read by the admin listener. Bounded
/// in records, and in body bytes: only bodies up to ``maxBodyBytes`` are kept.
///
/// A record is kept as the JSON line the file got and read back into a
/// ``TraceRecord`` only when the admin page asks: the writer thread makes no
/// record (no string per field) for each of thousands of exchanges a second.
public final class RecentTraces: Sendable {
    /// A written record and, when its curl lines name a body file, that body (if small enough).
    public struct Item: Sendable {
        public let record: TraceRecord
        public let bodyFile: (path: String, bytes: [UInt8])?
    }

    /// What the ring holds for one record.
    struct Kept: Sendable {
        let line: [UInt8]
        let bodyFile: (path: String, bytes: [UInt8])?
    }

    public static let defaultCapacity = 50
    public static let maxBodyBytes = 64 * 1024

    public let capacity: Int
    /// A ring: `items[next]` is the oldest once full.
    private let ring: NIOLockedValueBox<(items: [Kept], next: Int)>

    public init(capacity: Int = RecentTraces.defaultCapacity) {
        self.capacity = max(1, capacity)
        ring = NIOLockedValueBox((items: [], next: 0))
    }

    /// Keeps `record` (and its body file's bytes, when at most ``maxBodyBytes``), dropping the oldest when full.
    public func append(_ record: TraceRecord, bodyFile: (path: String, bytes: [UInt8])?) {
        append(line: record.jsonLine(), bodyFile: bodyFile)
    }

    /// Keeps a record by its JSON line (as written to the trace file).
    public func append(line: [UInt8], bodyFile: (path: String, bytes: [UInt8])?) {
        let kept = Kept(line: line, bodyFile: bodyFile.flatMap { $0.bytes.count <= Self.maxBodyBytes ? $0 : nil })
        // The line it replaces is freed after the lock.
        let replaced: Kept? = ring.withLockedValue { ring in
            if ring.items.count < capacity {
                ring.items.append(kept)
                return nil
            }
            var old = kept
            swap(&old, &ring.items[ring.next])
            ring.next = (ring.next + 1) % capacity
            return old
        }
        _ = replaced
    }

    /// The kept items, oldest first, read back from their lines.
    public var items: [Item] {
        let kept = ring.withLockedValue { ring in Array(ring.items[ring.next...] + ring.items[..<ring.next]) }
        let decoder = JSONDecoder()
        return kept.compactMap { kept in
            // Lines this process wrote always read back; one that did not would be left out, not fail the page.
            guard let record = try? decoder.decode(TraceRecord.self, from: Data(kept.line)) else { return nil }
            return Item(record: record, bodyFile: kept.bodyFile)
        }
    }
}
