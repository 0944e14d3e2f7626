import NIOConcurrencyHelpers
import NIOCore

/// The spans waiting for export, at most `tracing.max_queue`, already
/// encoded (``OTLPSpanWriter``) and gathered in batches of at most
/// `batchSize`, one export request each. What an exchange's end adds on its
/// event loop is one lock and a copy of its spans' bytes (a few hundred).
/// An exchange's spans are kept together: when they do not all fit, none is
/// queued, and the caller counts them
/// (`gateway_trace_spans_dropped_total{reason="queue_full"}`). The exporter
/// takes every batch at once.
final class SpanExportQueue: Sendable {
    /// Spans for one export request: `ScopeSpans.spans` entries, each framed.
    struct Batch: Sendable {
        var spans: Int
        var bytes: ByteBuffer
    }

    private struct State {
        var batches: [Batch] = []
        /// The spans in `batches`.
        var count = 0
    }

    let capacity: Int
    /// The most spans in a batch, and how many waiting make it worth sending before the schedule (`batchReady`).
    let batchSize: Int
    private let state = NIOLockedValueBox(State())

    /// A new batch's room: it grows as spans come.
    private static let batchCapacity = 16 * 1024

    init(capacity: Int, batchSize: Int) {
        self.capacity = max(1, capacity)
        self.batchSize = max(1, min(batchSize, capacity))
    }

    /// Queues `spans` spans, encoded in `encoded` (an exchange's, together),
    /// or none of them when they do not fit. Returns how many were not
    /// queued, and whether this brought the queue to `batchSize`.
    func enqueue(_ encoded: UnsafeRawBufferPointer, spans: Int) -> (dropped: Int, batchReady: Bool) {
        guard spans > 0 else { return (0, false) }
        return state.withLockedValue { (s: inout State) -> (dropped: Int, batchReady: Bool) in
            guard spans <= capacity - s.count else { return (spans, false) }
            if let last = s.batches.indices.last, s.batches[last].spans + spans <= batchSize {
                s.batches[last].spans += spans
                s.batches[last].bytes.writeBytes(encoded)
            } else {
                var bytes = ByteBufferAllocator().buffer(capacity: max(Self.batchCapacity, encoded.count))
                bytes.writeBytes(encoded)
                s.batches.append(Batch(spans: spans, bytes: bytes))
            }
            let before = s.count
            s.count += spans
            return (0, before < batchSize && s.count >= batchSize)
        }
    }

    /// Every waiting batch, the queue left empty.
    func takeAll() -> [Batch] {
        state.withLockedValue { (s: inout State) -> [Batch] in
            defer { s = State() }
            return s.batches
        }
    }

    /// The spans waiting.
    var count: Int { state.withLockedValue { $0.count } }
}
