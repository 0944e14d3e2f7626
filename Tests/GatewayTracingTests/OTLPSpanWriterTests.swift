import GatewayCore
import GatewayObservability
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayTracing

/// Spans written straight as protobuf (``OTLPSpanWriter``) in an export
/// request (``OTLPRequestFrame``): walked field by field (``ProtobufReader``:
/// the field numbers and wire types of `opentelemetry-proto`, lengths that
/// add up, values that read back), and held byte for byte to what the
/// gateway wrote before: the same content through the old encoder
/// (``ReferenceSpanEncoder``), the same exchange through the old plan
/// (``ReferenceSpanPlan``). The integration tests decode the same bytes with
/// the Python classes.
@Suite struct OTLPSpanWriterTests {
    static let trace = TraceID(high: 0x4bf9_2f35_77b3_4da6, low: 0xa3ce_929d_0e0e_4736)
    static let t0 = SpanPlanTests.t0
    /// Nanoseconds since 1970 at `t0`.
    static let wall: UInt64 = 1_700_000_000_000_000_000
    /// Reads both clocks after every instant the tests use: `t0` is `wall`, `t0 + x` is `wall + x`.
    static let clock = WallClock(wall: wall + 60_000_000_000, now: t0 + .seconds(60))

    // MARK: One span by hand

    /// The span the old encoder's tests used, as its header.
    static func header(_ name: SpanName = SpanName(method: .GET, route: "/users/{id}")) -> SpanHeader {
        SpanHeader(
            kind: .client, traceID: trace, spanID: SpanID(value: 0x00f0_67aa_0ba9_02b7), parentID: SpanID(value: 7),
            traceState: "congo=t61rcWkgMzE", name: name, start: wall, end: wall + 1_000_000_000
        )
    }

    /// Its attributes, event and status, written into `sink`.
    static func content<Sink: SpanFieldSink>(into sink: inout Sink) {
        let get: String = "GET"
        sink.attribute("http.request.method", string: get)
        sink.attribute("http.response.status_code", int: 503)
        sink.attribute("gateway.cancelled", bool: true)
        sink.attribute("gateway.delta", int: -1)
        sink.event("gateway.retry.backoff", at: t0 + .milliseconds(500), duration: .microseconds(2500), retryReason: nil)
        sink.status(SpanStatus(code: .error, message: "503"))
    }

    /// The same span as the old encoder's tests built it.
    static func finished() -> FinishedSpan {
        var attributes = SpanAttributes()
        attributes.set("http.request.method", value: .string("GET"))
        attributes.set("http.response.status_code", value: .int64(503))
        attributes.set("gateway.cancelled", value: .bool(true))
        attributes.set("gateway.delta", value: .int64(-1))
        let event = FinishedSpan.Event(
            name: "gateway.retry.backoff", time: 1_700_000_000_500_000_000, attributes: ["gateway.duration_ms": .double(2.5)]
        )
        return FinishedSpan(
            name: "GET /users/{id}", kind: .client, traceID: trace, spanID: SpanID(value: 0x00f0_67aa_0ba9_02b7), parentID: SpanID(value: 7),
            traceState: "congo=t61rcWkgMzE", start: 1_700_000_000_000_000_000, end: 1_700_000_001_000_000_000,
            attributes: attributes, events: [event], status: SpanStatus(code: .error, message: "503")
        )
    }

    /// `count` copies of the hand-written span, framed as a request.
    static func body(spans count: Int) -> ByteBuffer {
        var writer = OTLPSpanWriter(clock: clock)
        for _ in 0..<count {
            writer.beginSpan(header())
            content(into: &writer)
            writer.endSpan()
        }
        return OTLPRequestFrame(serviceName: "svc").body(for: SpanChunk(bytes: writer.buffer, count: writer.spanCount))
    }

    static func bytes(_ buffer: ByteBuffer) -> [UInt8] { Array(buffer.readableBytesView) }

    @Test func anExportRequestHasTheProtocolsFields() throws {
        let request = try ProtobufReader.fields(Self.bytes(Self.body(spans: 2)))
        #expect(request.map(\.number) == [1], "resource_spans")
        let resourceSpans = try request[0].message()
        #expect(resourceSpans.map(\.number) == [1, 2], "resource, scope_spans")
        let resource = try resourceSpans[0].message()
        let serviceName = try resource[0].message()
        #expect(try serviceName[0].string() == "service.name")
        #expect(try serviceName[1].message()[0].string() == "svc")
        let scopeSpans = try resourceSpans[1].message()
        #expect(scopeSpans.map(\.number) == [1, 2, 2], "scope, two spans")
        #expect(try scopeSpans[0].message()[0].string() == "gateway")

        let span = try scopeSpans[1].message()
        #expect(span.map(\.number) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 11, 15])
        #expect(span[0].bytes == [0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36])
        #expect(span[1].bytes == [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
        #expect(try span[2].string() == "congo=t61rcWkgMzE")
        #expect(span[3].bytes == [0, 0, 0, 0, 0, 0, 0, 7])
        #expect(try span[4].string() == "GET /users/{id}")
        #expect(span[5].wireType == 0 && span[5].value == 3, "SPAN_KIND_CLIENT")
        #expect(span[6].wireType == 1 && span[6].value == 1_700_000_000_000_000_000)
        #expect(span[7].wireType == 1 && span[7].value == 1_700_000_001_000_000_000)

        let method = try span[8].message()
        #expect(try method[0].string() == "http.request.method")
        #expect(try method[1].message()[0].number == 1 && method[1].message()[0].string() == "GET")
        let status = try span[9].message()[1].message()[0]
        #expect(status.number == 3 && status.value == 503, "int_value")
        let cancelled = try span[10].message()[1].message()[0]
        #expect(cancelled.number == 2 && cancelled.value == 1, "bool_value")
        let negative = try span[11].message()[1].message()[0]
        #expect(negative.number == 3 && negative.value == UInt64.max, "int_value, two's complement")

        let event = try span[12].message()
        #expect(event.map(\.number) == [1, 2, 3])
        #expect(event[0].wireType == 1 && event[0].value == 1_700_000_000_500_000_000)
        #expect(try event[1].string() == "gateway.retry.backoff")
        let duration = try event[2].message()[1].message()[0]
        #expect(duration.number == 4 && duration.wireType == 1 && Double(bitPattern: duration.value) == 2.5, "double_value")

        let spanStatus = try span[13].message()
        #expect(spanStatus.map(\.number) == [2, 3])
        #expect(try spanStatus[0].string() == "503")
        #expect(spanStatus[1].value == 2, "STATUS_CODE_ERROR")
    }

    /// The hand-written span is, byte for byte, what the old encoder made of the same span; so is the frame around it.
    @Test func theWriterWritesWhatTheOldEncoderWrote() {
        for count in [1, 2, 3] {
            let expected = ReferenceSpanEncoder(serviceName: "svc").encode(Array(repeating: Self.finished(), count: count)[...])
            #expect(Self.bytes(Self.body(spans: count)) == Self.bytes(expected), "\(count) spans")
        }
        let empty = ReferenceSpanEncoder(serviceName: "svc").encode(ArraySlice<FinishedSpan>())
        #expect(Self.bytes(OTLPRequestFrame(serviceName: "svc").body(for: SpanChunk())) == Self.bytes(empty))
    }

    @Test func aRootSpanHasNoParentNorTraceStateAndAnUnsetStatusIsLeftOut() throws {
        var header = Self.header()
        header.parentID = nil
        header.traceState = nil
        header.kind = .server
        var writer = OTLPSpanWriter(clock: Self.clock)
        writer.beginSpan(header)
        writer.endSpan()
        let body = OTLPRequestFrame(serviceName: "svc").body(for: SpanChunk(bytes: writer.buffer, count: 1))
        let span = try ProtobufReader.fields(Self.bytes(body))[0].message()[1].message()[1].message()
        #expect(span.map(\.number) == [1, 2, 5, 6, 7, 8])
        #expect(span[3].value == 2, "SPAN_KIND_SERVER")

        var root = Self.finished()
        root.parentID = nil
        root.traceState = ""
        root.status = nil
        root.events = []
        root.kind = .server
        root.attributes = [:]
        #expect(Self.bytes(body) == Self.bytes(ReferenceSpanEncoder(serviceName: "svc").encode([root][...])))
        var empty = header
        empty.traceState = ""
        var again = OTLPSpanWriter(clock: Self.clock)
        again.beginSpan(empty)
        again.endSpan()
        #expect(Self.bytes(again.buffer) == Self.bytes(writer.buffer), "an empty tracestate is none")
    }

    /// A span's length takes the two bytes kept for it, or the span moves: a
    /// short span (under 128 bytes) has a one-byte length, a long one (16 KiB
    /// or more) three; every length minimal, the spans around them intact.
    @Test func shortAndLongSpansKeepMinimalLengths() throws {
        var short = Self.header(SpanName(method: .GET, route: "/"))
        short.parentID = nil
        short.traceState = nil
        let long = String(repeating: "a", count: 20_000)
        var writer = OTLPSpanWriter(clock: Self.clock)
        var expected: [FinishedSpan] = []
        for size in ["short", "usual", "long", "usual", "short"] {
            var recorder = RecordingSink()
            let header = size == "short" ? short : Self.header()
            writer.beginSpan(header)
            if size == "usual" {
                Self.content(into: &writer)
                Self.content(into: &recorder)
            } else if size == "long" {
                writer.attribute("url.path", string: long)
                recorder.attribute("url.path", string: long)
            }
            writer.endSpan()
            expected.append(RecordedSpan(recorder, end: Self.t0).finished(header, clock: Self.clock))
        }
        #expect(writer.spanCount == 5)

        let chunk = Self.bytes(writer.buffer)
        #expect(chunk[0] == 0x12 && chunk[1] < 0x80, "a one-byte length")
        #expect(Int(chunk[1]) < 128 && Int(chunk[1]) == ProtobufReader.fieldLengths(chunk)[0] - 2)
        let lengths = ProtobufReader.fieldLengths(chunk)
        #expect(lengths.count == 5)
        #expect(lengths.reduce(0, +) == chunk.count)
        let longStart = lengths[0] + lengths[1]
        #expect(chunk[longStart + 1] >= 0x80 && chunk[longStart + 2] >= 0x80 && chunk[longStart + 3] < 0x80, "a three-byte length")

        let body = OTLPRequestFrame(serviceName: "svc").body(for: SpanChunk(bytes: writer.buffer, count: 5))
        #expect(Self.bytes(body) == Self.bytes(ReferenceSpanEncoder(serviceName: "svc").encode(expected[...])))
    }

    // MARK: An exchange's spans

    /// The ids an exchange's spans take in these tests.
    static let ids = ExchangeSpans.IDs(
        trace: trace, span: SpanID(value: 0x1111_2222_3333_4444), parent: SpanID(value: 0x00f0_67aa_0ba9_02b7),
        traceState: "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7", sampled: true
    )

    /// An exchange's spans written as ``ExchangeSpans`` writes them (the
    /// plan into the writer: the SERVER span, then each CLIENT span), framed.
    static func written(_ exchange: PlanCase, ids: ExchangeSpans.IDs, redactor: TraceRedactor) -> [UInt8] {
        let inputs = exchange.inputs
        let plan = SpanPlan(inputs, redactor: redactor)
        let name = SpanName(method: inputs.request.method, route: inputs.route)
        var writer = OTLPSpanWriter(clock: clock)
        writer.beginSpan(
            SpanHeader(
                kind: .server, traceID: ids.trace, spanID: ids.span, parentID: ids.parent, traceState: ids.traceState, name: name,
                start: clock.timestamp(t0), end: clock.timestamp(plan.serverEnd)
            )
        )
        plan.writeServer(into: &writer)
        writer.endSpan()
        for (resend, attempt) in exchange.clientAttempts.enumerated() {
            writer.beginSpan(
                SpanHeader(
                    kind: .client, traceID: ids.trace, spanID: clientSpan(resend), parentID: ids.span, traceState: ids.traceState,
                    name: name, start: clock.timestamp(clientStart(resend)), end: clock.timestamp(plan.clientEnd(attempt: attempt))
                )
            )
            plan.writeClient(resend: resend, attempt: attempt, into: &writer)
            writer.endSpan()
        }
        return bytes(OTLPRequestFrame(serviceName: "svc").body(for: SpanChunk(bytes: writer.buffer, count: writer.spanCount)))
    }

    /// The same exchange as the gateway made it before: the old plan's values,
    /// spans built from them (as the old `ExchangeSpans` did), the old encoder.
    static func madeBefore(_ exchange: PlanCase, ids: ExchangeSpans.IDs, redactor: TraceRedactor) -> [UInt8] {
        let inputs = exchange.inputs
        let plan = ReferenceSpanPlan(
            ReferenceSpanPlan.Inputs(
                request: inputs.request, route: inputs.route, requestID: inputs.requestID, clientAddress: inputs.clientAddress,
                attempts: inputs.attempts, retries: inputs.retries, waits: inputs.waits, clientAttempts: exchange.clientAttempts,
                outcome: inputs.outcome, end: inputs.end
            ),
            redactor: redactor
        )
        let name = ReferenceSpanPlan.name(method: inputs.request.method, route: inputs.route)
        func span(
            _ kind: SpanKind, id: SpanID, parent: SpanID?, start: ContinuousClock.Instant, as planned: ReferenceSpanPlan.Planned
        ) -> FinishedSpan {
            FinishedSpan(
                name: name, kind: kind, traceID: ids.trace, spanID: id, parentID: parent, traceState: ids.traceState ?? "",
                start: clock.timestamp(start), end: clock.timestamp(planned.end), attributes: planned.attributes,
                events: planned.events.map { FinishedSpan.Event(name: $0.name, time: clock.timestamp($0.at), attributes: $0.attributes) },
                status: planned.status
            )
        }
        var spans = [span(.server, id: ids.span, parent: ids.parent, start: t0, as: plan.server)]
        for (resend, planned) in plan.clients.enumerated() {
            spans.append(span(.client, id: clientSpan(resend), parent: ids.span, start: clientStart(resend), as: planned))
        }
        return bytes(ReferenceSpanEncoder(serviceName: "svc").encode(spans[...]))
    }

    static func clientSpan(_ resend: Int) -> SpanID { SpanID(value: 0xc000 + UInt64(resend)) }
    static func clientStart(_ resend: Int) -> ContinuousClock.Instant { t0 + .milliseconds(2 + 22 * resend) }

    /// Exchanges that take every branch of the plan: retried (events on both
    /// kinds of span, a 503 attempt's error status), failed (a gateway error),
    /// an attempt never sent, a request intercepted over https (another
    /// scheme and port, no query), an extension method, a cancelled exchange.
    static func exchanges() -> [(String, PlanCase)] {
        var failed = SpanPlanTests.retried()
        var attempt = AttemptTimings(started: SpanPlanTests.at(1))
        attempt.end = SpanPlanTests.at(3)
        attempt.errorCode = .connectFailed
        failed.attempts = AttemptList([attempt])
        failed.retries = []
        failed.waits = []
        failed.clientAttempts = [0]
        failed.outcome = ExchangeOutcome(status: 502, responseBytes: 0, error: .connectFailed)

        var notSent = SpanPlanTests.retried()
        notSent.clientAttempts = [0, 1, 2]

        var intercepted = SpanPlanTests.retried()
        var request = ProxyRequest(method: .POST, scheme: .https, host: "origin.internal", port: 8443, target: "/v1/charges", headers: HTTPHeaders())
        request.clientOrigin = "https://api.example.com"
        intercepted.request = request

        var other = SpanPlanTests.retried()
        other.request = ProxyRequest(
            method: HTTPMethod(rawValue: "PROPFIND"), scheme: .http, host: "::1", port: 8080, target: "/dav/é?x=1", headers: HTTPHeaders()
        )
        other.clientAddress = "unknown"
        other.outcome = ExchangeOutcome(status: 404, responseBytes: 0, error: nil, cancelled: true)

        var cancelled = SpanPlanTests.retried()
        cancelled.outcome = ExchangeOutcome(status: nil, responseBytes: 0, error: nil, cancelled: true)
        cancelled.waits.append(RecordedWait(kind: .tokenRefresh, start: SpanPlanTests.at(14), end: SpanPlanTests.at(20)))

        return [
            ("retried", SpanPlanTests.retried()), ("failed", failed), ("not sent", notSent), ("intercepted", intercepted),
            ("extension method", other), ("cancelled", cancelled),
        ]
    }

    /// Every exchange's spans are, byte for byte, what the old plan and encoder made of it: with a parent and a tracestate, and as a root.
    @Test func anExchangesSpansAreWhatTheGatewayWroteBefore() {
        var root = Self.ids
        root.parent = nil
        root.traceState = nil
        for (label, exchange) in Self.exchanges() {
            for ids in [Self.ids, root] {
                let written = Self.written(exchange, ids: ids, redactor: SpanPlanTests.redactor)
                let before = Self.madeBefore(exchange, ids: ids, redactor: SpanPlanTests.redactor)
                #expect(written == before, "\(label), parent \(ids.parent != nil)")
            }
        }
    }
}

extension ProtobufReader {
    /// The bytes each top-level field of `bytes` takes (key and length included): a chunk's spans.
    static func fieldLengths(_ bytes: [UInt8]) -> [Int] {
        var lengths: [Int] = []
        var index = 0
        while index < bytes.count {
            var cursor = index + 1
            var length = 0
            var shift = 0
            while cursor < bytes.count {
                let byte = bytes[cursor]
                cursor += 1
                length |= Int(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            lengths.append(cursor - index + length)
            index = cursor + length
        }
        return lengths
    }
}
