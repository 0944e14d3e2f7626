import Testing

@testable import GatewayTracing

/// The export queue's bound and batches, and the once-a-minute failure log.
@Suite struct SpanExportQueueTests {
    static func spans(_ count: Int) -> [FinishedSpan] {
        let span = FinishedSpan(
            name: "GET /", kind: .server, traceID: TraceID(high: 1, low: 2), spanID: SpanID(value: 3), parentID: nil,
            traceState: "", start: 1, end: 2, attributes: [:], events: [], status: nil
        )
        return Array(repeating: span, count: count)
    }

    @Test func spansBeyondTheBoundAreRefusedAndCounted() {
        let queue = SpanExportQueue(capacity: 5, batchSize: 4)
        #expect(queue.enqueue(Self.spans(3)) == (dropped: 0, batchReady: false))
        #expect(queue.enqueue(Self.spans(3)) == (dropped: 1, batchReady: true), "two fit; the batch size is reached")
        #expect(queue.enqueue(Self.spans(2)) == (dropped: 2, batchReady: false))
        #expect(queue.takeAll().count == 5)
        #expect(queue.count == 0)
        #expect(queue.enqueue(Self.spans(1)) == (dropped: 0, batchReady: false))
    }

    @Test func exportFailuresAreLoggedOnceAMinuteWithTheSpansDroppedBetween() {
        let log = ExportFailureLog()
        let start = ContinuousClock.now
        #expect(log.shouldLog(count: 10, now: start, interval: .seconds(60)) == 0)
        #expect(log.shouldLog(count: 5, now: start + .seconds(10), interval: .seconds(60)) == nil)
        #expect(log.shouldLog(count: 7, now: start + .seconds(30), interval: .seconds(60)) == nil)
        #expect(log.shouldLog(count: 1, now: start + .seconds(61), interval: .seconds(60)) == 12)
    }
}
