import GatewayConfig
import GatewayCore
import NIOCore
import NIOEmbedded
import Testing

@testable import GatewayTracing

/// An exchange's spans from its begin to its end, through the gateway's
/// tracer: finishing writes them as protobuf and queues them, once; their ids
/// and parents are those the trace context gave (the client's span, each
/// attempt's `traceparent`); a sampled-out exchange queues nothing.
@Suite struct ExchangeSpansTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
    }

    /// Begins an exchange, prepares and records `attempts` attempts (the first
    /// a 503, then 200s) and finishes it twice. Returns its spans and what each attempt sent upstream.
    static func exchange(_ tracer: GatewayTracer, attempts: Int) throws -> (spans: ExchangeSpans, sent: [TraceParent]) {
        let observer = TracingObserver(tracer: tracer, config: GatewayConfig())
        let context = TracingTestSupport.context()
        let routed = TracingTestSupport.request([("traceparent", TraceParentTests.valid), ("tracestate", "congo=t61rcWkgMzE")])
        let spans = try #require(observer.begin(routed, context: context) as? ExchangeSpans)
        var sent: [TraceParent] = []
        for attempt in 0..<attempts {
            var request = routed
            _ = TracePropagationStep().prepare(&request, context: context, on: EmbeddedEventLoop())
            sent.append(try #require(TraceParent(headers: request.headers)))
            var timings = AttemptTimings(started: .now, reusedConnection: attempt > 0)
            timings.status = attempt == 0 ? 503 : 200
            timings.end = .now
            _ = context.record.beginAttempt(timings)
        }
        spans.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
        spans.finish(ExchangeOutcome(status: 200, responseBytes: 0, error: nil))
        return (spans, sent)
    }

    @Test func aFinishedExchangeQueuesItsSpansOnceAsProtobuf() throws {
        let tracer = try TracingTestSupport.tracer()
        let (spans, sent) = try Self.exchange(tracer, attempts: 2)
        #expect(tracer.exporter.queue.count == 3, "a SERVER span and two CLIENT spans, queued once")
        let chunks = tracer.exporter.queue.takeAll()
        try #require(chunks.count == 1 && chunks[0].count == 3)
        let decoded = try ProtobufReader.fields(Array(chunks[0].bytes.readableBytesView)).map { try $0.message() }
        try #require(decoded.count == 3)

        let server = decoded[0]
        #expect(server.map(\.number).prefix(8) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(Self.hex(server[0].bytes) == TraceParentTests.trace)
        #expect(Self.hex(server[1].bytes) == spans.spanID)
        #expect(try server[2].string() == "congo=t61rcWkgMzE")
        #expect(Self.hex(server[3].bytes) == TraceParentTests.parent, "the client's span is the parent")
        #expect(try server[4].string().hasPrefix("GET /users/"))
        #expect(server[5].value == 2, "SPAN_KIND_SERVER")
        #expect(server[6].value <= server[7].value)

        for (client, upstream) in zip(decoded[1...], sent) {
            #expect(Self.hex(client[0].bytes) == TraceParentTests.trace)
            #expect(Self.hex(client[1].bytes) == upstream.parentID, "the upstream's parent is the attempt's span")
            #expect(Self.hex(client[3].bytes) == spans.spanID, "the attempt's parent is the exchange's span")
            #expect(try client[4].string() == server[4].string())
            #expect(client[5].value == 3, "SPAN_KIND_CLIENT")
        }
        #expect(decoded[1].contains { $0.number == 15 } && !decoded[2].contains { $0.number == 15 }, "the 503 is an error, the 200 not")
    }

    @Test func aSampledOutExchangeQueuesNothingAndStillPropagates() throws {
        let tracer = try TracingTestSupport.tracer { $0.sampler = .alwaysOff }
        let (spans, sent) = try Self.exchange(tracer, attempts: 2)
        #expect(!spans.isSampled)
        #expect(sent.count == 2 && sent.allSatisfy { !$0.sampled && $0.traceID == TraceParentTests.trace })
        #expect(tracer.exporter.queue.count == 0)
    }

    @Test func theIDsAreHexWhenRead() throws {
        let tracer = try TracingTestSupport.tracer()
        let observer = TracingObserver(tracer: tracer, config: GatewayConfig())
        let spans = try #require(observer.begin(TracingTestSupport.request(), context: TracingTestSupport.context()) as? ExchangeSpans)
        #expect(spans.traceID == spans.ids.trace.hex && spans.traceID.count == 32)
        #expect(spans.spanID == spans.ids.span.hex && spans.spanID.count == 16)
        #expect(spans.traceID == spans.traceID, "the same each time")
    }

    /// A thread's span buffer is kept from one exchange to the next, empty each time; one a huge span grew is let go.
    @Test func aThreadKeepsItsSpanBuffer() {
        var buffer = SpanScratch.take()
        #expect(buffer.readableBytes == 0 && buffer.capacity >= SpanScratch.initialCapacity)
        buffer.writeString("spans")
        let capacity = buffer.capacity
        SpanScratch.recycle(buffer)
        buffer = ByteBuffer()
        let again = SpanScratch.take()
        #expect(again.readableBytes == 0 && again.capacity == capacity)

        var huge = again
        huge.reserveCapacity(SpanScratch.keptCapacity * 2)
        SpanScratch.recycle(huge)
        let fresh = SpanScratch.take()
        #expect(fresh.capacity < SpanScratch.keptCapacity * 2)
        SpanScratch.recycle(fresh)
    }
}
