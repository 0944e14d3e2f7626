import NIOConcurrencyHelpers

/// The finished spans waiting for export, at most `tracing.max_queue`: what
/// an exchange's end adds on its event loop is one lock and an append (the
/// spans of an exchange together), the excess dropped and counted
/// (`gateway_trace_spans_dropped_total{reason="queue_full"}`, through
/// `dropped`). The exporter takes the whole array at once, swapping in an
/// empty one: no span is copied on the way.
final class SpanExportQueue: Sendable {
    private struct State {
        var spans: [FinishedSpan]
    }

    let capacity: Int
    /// How many waiting spans make a batch worth sending before the schedule (`batchReady`).
    let batchSize: Int
    private let state: NIOLockedValueBox<State>
    private let dropped: @Sendable (Int) -> Void
    private let batchReady: @Sendable () -> Void

    /// - Parameters:
    ///   - dropped: called with the number of spans that did not fit (outside the lock).
    ///   - batchReady: called (outside the lock) when an append brings the queue to `batchSize`.
    init(capacity: Int, batchSize: Int, dropped: @escaping @Sendable (Int) -> Void, batchReady: @escaping @Sendable () -> Void) {
        self.capacity = max(1, capacity)
        self.batchSize = max(1, min(batchSize, capacity))
        var spans: [FinishedSpan] = []
        spans.reserveCapacity(min(self.capacity, 4096))
        self.state = NIOLockedValueBox(State(spans: spans))
        self.dropped = dropped
        self.batchReady = batchReady
    }

    /// Queues `spans` (an exchange's), as many as fit.
    func enqueue(_ spans: [FinishedSpan]) {
        guard !spans.isEmpty else { return }
        let (refused, reachedBatch) = state.withLockedValue { (s: inout State) -> (Int, Bool) in
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
        if refused > 0 { dropped(refused) }
        if reachedBatch { batchReady() }
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
