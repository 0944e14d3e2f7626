import NIOConcurrencyHelpers
import NIOCore

/// Spans encoded for export, at most the batch size of them: each a
/// `ScopeSpans.spans` field (key, length, `Span`), one after another, as
/// ``OTLPSpanWriter`` wrote them. One chunk is one export request's spans
/// (``OTLPRequestFrame``).
struct SpanChunk: Sendable {
    var bytes = ByteBuffer()
    var count = 0
}

/// The encoded spans waiting for export, at most `tracing.max_queue`: what an
/// exchange's end adds on its event loop is one lock and one copy of its
/// spans' bytes into the chunk being filled, the excess dropped (the caller
/// counts them: `gateway_trace_spans_dropped_total{reason="queue_full"}`).
/// Chunks hold `batchSize` spans at most, so the exporter sends each as it
/// is; it takes them all at once, empty ones swapped in (``takeAll()``).
final class SpanExportQueue: Sendable {
    private struct State {
        /// Chunks of `batchSize` spans, oldest first.
        var full: [SpanChunk] = []
        /// The chunk being filled: fewer than `batchSize` spans.
        var open = SpanChunk()
        /// The spans waiting, in all chunks.
        var count = 0
    }

    let capacity: Int
    /// The most spans in a chunk, and how many waiting make a batch worth sending before the schedule (`batchReady`).
    let batchSize: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int, batchSize: Int) {
        self.capacity = max(1, capacity)
        self.batchSize = max(1, min(batchSize, capacity))
    }

    /// Queues `count` spans (an exchange's), encoded one after another in
    /// `spans`' readable bytes, as many as fit. Returns how many did not, and
    /// whether this brought the queue to `batchSize`.
    func enqueue(_ spans: ByteBuffer, count: Int) -> (dropped: Int, batchReady: Bool) {
        guard count > 0 else { return (0, false) }
        return state.withLockedValue { (s: inout State) -> (dropped: Int, batchReady: Bool) in
            let before = s.count
            let accepted = max(0, min(count, capacity - before))
            if accepted == count, s.open.count + count <= batchSize {
                // Nearly always: the exchange's spans fit the open chunk, copied at once.
                s.open.bytes.writeImmutableBuffer(spans)
                s.open.count += count
                if s.open.count == batchSize { close(&s) }
            } else if accepted > 0 {
                // Across a chunk's end, or cut by the bound: span by span.
                var index = spans.readerIndex
                for _ in 0..<accepted {
                    let length = Self.fieldLength(in: spans, at: index)
                    guard let span = spans.getSlice(at: index, length: length) else {
                        preconditionFailure("protobuf: a queued span's bytes are short")
                    }
                    s.open.bytes.writeImmutableBuffer(span)
                    s.open.count += 1
                    index += length
                    if s.open.count == batchSize { close(&s) }
                }
            }
            s.count += accepted
            return (count - accepted, before < batchSize && s.count >= batchSize)
        }
    }

    /// Every waiting span, in chunks, oldest first; the queue left empty.
    func takeAll() -> [SpanChunk] {
        var taken = State()
        state.withLockedValue { swap(&taken, &$0) }
        if taken.open.count > 0 { taken.full.append(taken.open) }
        return taken.full
    }

    /// The spans waiting.
    var count: Int { state.withLockedValue { $0.count } }

    /// The open chunk, full, joins the full ones.
    private func close(_ s: inout State) {
        s.full.append(s.open)
        s.open = SpanChunk()
    }

    /// The bytes of the span field at `index` in `spans`: its key (field 2,
    /// one byte), its length (a varint), the `Span`.
    static func fieldLength(in spans: ByteBuffer, at index: Int) -> Int {
        var offset = index + 1
        var length = 0
        var shift = 0
        while true {
            guard let byte = spans.getInteger(at: offset, as: UInt8.self), shift < 64 else {
                preconditionFailure("protobuf: a queued span's length is cut")
            }
            offset += 1
            length |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        return offset - index + length
    }
}
