import NIOConcurrencyHelpers

/// The finished spans waiting for export, at most `tracing.max_queue`: what
/// an exchange's end adds on its event loop is one lock and an append (the
/// spans of an exchange together), the excess dropped (the caller counts
/// them: `gateway_trace_spans_dropped_total{reason="queue_full"}`). The
/// exporter takes the whole array at once, swapping in an empty one: no span
/// is copied on the way.
final class SpanExportQueue: Sendable {
    private struct State {
        var spans: [FinishedSpan]
    }

    let capacity: Int
    /// How many waiting spans make a batch worth sending before the schedule (`batchReady`).
    let batchSize: Int
    private let state: NIOLockedValueBox<State>

    init(capacity: Int, batchSize: Int) {
        self.capacity = max(1, capacity)
        self.batchSize = max(1, min(batchSize, capacity))
        var spans: [FinishedSpan] = []
        spans.reserveCapacity(min(self.capacity, 4096))
        self.state = NIOLockedValueBox(State(spans: spans))
    }

    /// Queues `spans` (an exchange's), as many as fit. Returns how many did
    /// not, and whether this append brought the queue to `batchSize`.
    func enqueue(_ spans: [FinishedSpan]) -> (dropped: Int, batchReady: Bool) {
        guard !spans.isEmpty else { return (0, false) }
        return state.withLockedValue { (s: inout State) -> (dropped: Int, batchReady: Bool) in
            let before = s.spans.count
            let room = capacity - before
            if room >= spans.count {
                s.spans.append(contentsOf: spans)
            } else if room > 0 {
                s.spans.append(contentsOf: spans[..<room])
            }
            let after = s.spans.count
            return (spans.count - (after - before), before < batchSize && after >= batchSize)
        }
    }

    /// Every waiting span, the queue left empty.
    func takeAll() -> [FinishedSpan] {
        var fresh: [FinishedSpan] = []
        fresh.reserveCapacity(batchSize)
        return state.withLockedValue { (s: inout State) -> [FinishedSpan] in
            swap(&fresh, &s.spans)
            return fresh
        }
    }

    /// The spans waiting.
    var count: Int { state.withLockedValue { $0.spans.count } }
}
