import NIOCore
import Testing

@testable import GatewayTracing

/// The export queue's bound and batches, and the once-a-minute failure log.
@Suite struct SpanExportQueueTests {
    /// Queues `count` spans' bytes: each byte says which enqueue it came with.
    static func enqueue(_ count: Int, tag: UInt8, into queue: SpanExportQueue) -> (dropped: Int, batchReady: Bool) {
        Array(repeating: tag, count: count).withUnsafeBytes { queue.enqueue($0, spans: count) }
    }

    @Test func anExchangesSpansAreQueuedTogetherOrRefusedTogether() {
        let queue = SpanExportQueue(capacity: 5, batchSize: 4)
        #expect(Self.enqueue(3, tag: 1, into: queue) == (dropped: 0, batchReady: false))
        #expect(Self.enqueue(3, tag: 2, into: queue) == (dropped: 3, batchReady: false), "three do not fit: none is queued")
        #expect(Self.enqueue(1, tag: 3, into: queue) == (dropped: 0, batchReady: true), "the batch size is reached")
        #expect(Self.enqueue(1, tag: 4, into: queue) == (dropped: 0, batchReady: false), "a new batch: the first is full")
        #expect(Self.enqueue(1, tag: 5, into: queue) == (dropped: 1, batchReady: false), "the bound")
        #expect(queue.count == 5)
        let batches = queue.takeAll()
        #expect(batches.map(\.spans) == [4, 1])
        #expect(batches.map { Array($0.bytes.readableBytesView) } == [[1, 1, 1, 3], [4]])
        #expect(queue.count == 0)
        #expect(queue.takeAll().isEmpty)
        #expect(Self.enqueue(1, tag: 6, into: queue) == (dropped: 0, batchReady: false))
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
