import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayTracing

/// The export queue's bound, chunks and swap, and the once-a-minute failure log.
@Suite struct SpanExportQueueTests {
    /// `count` encoded spans, told apart by their span ids (`first`, `first + 1`, ...).
    static func spans(_ count: Int, first: UInt64 = 1) -> ByteBuffer {
        var writer = OTLPSpanWriter(clock: WallClock(wall: 2_000_000_000, now: .now))
        for index in 0..<UInt64(count) {
            writer.beginSpan(
                SpanHeader(
                    kind: .server, traceID: TraceID(high: 1, low: 2), spanID: SpanID(value: first + index), parentID: nil, traceState: nil,
                    name: SpanName(method: .GET, route: "/"), start: 1, end: 2
                )
            )
            writer.attribute("gateway.attempts", int: Int64(index))
            writer.endSpan()
        }
        return writer.buffer
    }

    /// The span ids of a chunk's spans, in order, read back from its bytes.
    static func ids(_ chunk: SpanChunk) throws -> [UInt64] {
        try ProtobufReader.fields(Array(chunk.bytes.readableBytesView)).map { field in
            #expect(field.number == 2, "ScopeSpans.spans")
            let id = try field.message()[1].bytes
            return id.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    @Test func spansBeyondTheBoundAreRefusedAndCounted() throws {
        let queue = SpanExportQueue(capacity: 5, batchSize: 4)
        #expect(queue.enqueue(Self.spans(3, first: 1), count: 3) == (dropped: 0, batchReady: false))
        #expect(queue.enqueue(Self.spans(3, first: 11), count: 3) == (dropped: 1, batchReady: true), "two fit; the batch size is reached")
        #expect(queue.enqueue(Self.spans(2, first: 21), count: 2) == (dropped: 2, batchReady: false))
        #expect(queue.count == 5)
        let chunks = queue.takeAll()
        #expect(chunks.map(\.count) == [4, 1])
        #expect(try chunks.map(Self.ids) == [[1, 2, 3, 11], [12]], "the first of the cut exchange's spans, in order")
        #expect(queue.count == 0)
        #expect(queue.enqueue(Self.spans(1), count: 1) == (dropped: 0, batchReady: false))
    }

    @Test func chunksHoldTheBatchSizeAtMost() throws {
        let queue = SpanExportQueue(capacity: 100, batchSize: 4)
        #expect(queue.enqueue(Self.spans(2, first: 1), count: 2) == (dropped: 0, batchReady: false))
        #expect(queue.enqueue(Self.spans(2, first: 11), count: 2) == (dropped: 0, batchReady: true), "exactly full: closed at once")
        #expect(queue.enqueue(Self.spans(7, first: 21), count: 7) == (dropped: 0, batchReady: false), "across two chunks' ends")
        #expect(queue.enqueue(Self.spans(1, first: 31), count: 1) == (dropped: 0, batchReady: false))
        let chunks = queue.takeAll()
        #expect(chunks.map(\.count) == [4, 4, 4])
        #expect(try chunks.map(Self.ids) == [[1, 2, 11, 12], [21, 22, 23, 24], [25, 26, 27, 31]])
        // Each chunk's bytes are its spans' fields as written, back to back.
        let whole = Self.spans(7, first: 21)
        let lengths = ProtobufReader.fieldLengths(Array(whole.readableBytesView))
        let firstFour = lengths.prefix(4).reduce(0, +)
        #expect(Array(chunks[1].bytes.readableBytesView) == Array(whole.readableBytesView.prefix(firstFour)))
    }

    @Test func takingSwapsInAnEmptyQueue() throws {
        let queue = SpanExportQueue(capacity: 10, batchSize: 4)
        #expect(queue.takeAll().isEmpty, "nothing waits: no chunk")
        _ = queue.enqueue(Self.spans(3, first: 1), count: 3)
        let taken = queue.takeAll()
        #expect(taken.map(\.count) == [3])
        #expect(queue.count == 0 && queue.takeAll().isEmpty)
        #expect(queue.enqueue(Self.spans(2, first: 7), count: 2) == (dropped: 0, batchReady: false), "the bound counts from empty again")
        #expect(try queue.takeAll().map(Self.ids) == [[7, 8]])
        #expect(try taken.map(Self.ids) == [[1, 2, 3]], "a chunk taken is the exporter's own")
        #expect(queue.enqueue(ByteBuffer(), count: 0) == (dropped: 0, batchReady: false))
    }

    @Test func aFieldsLengthIsReadFromItsKeyAndVarint() {
        let spans = Self.spans(3)
        let lengths = ProtobufReader.fieldLengths(Array(spans.readableBytesView))
        var index = spans.readerIndex
        for length in lengths {
            #expect(SpanExportQueue.fieldLength(in: spans, at: index) == length)
            index += length
        }
        #expect(index == spans.writerIndex)
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
