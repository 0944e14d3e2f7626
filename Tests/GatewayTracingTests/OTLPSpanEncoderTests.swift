import NIOCore
import Testing

@testable import GatewayTracing

/// The encoder's output walked field by field (``ProtobufReader``): the field
/// numbers and wire types of `opentelemetry-proto`'s `ExportTraceServiceRequest`,
/// lengths that add up, values that read back. The integration tests decode
/// the same bytes with the Python classes.
@Suite struct OTLPSpanEncoderTests {
    static let trace = TraceID(high: 0x4bf9_2f35_77b3_4da6, low: 0xa3ce_929d_0e0e_4736)

    /// A CLIENT span with a field of every kind, written after what `writer` holds.
    static func writeSpan(into writer: OTLPSpanWriter) {
        writer.begin(
            .client, name: "GET /users/{id}", trace: trace, span: SpanID(value: 0x00f0_67aa_0ba9_02b7), parent: SpanID(value: 7),
            traceState: "congo=t61rcWkgMzE", start: 1_700_000_000_000_000_000
        )
        writer.attribute("http.request.method", .string("GET"))
        writer.attribute("http.response.status_code", .int64(503))
        writer.attribute("gateway.cancelled", .bool(true))
        writer.attribute("gateway.delta", .int64(-1))
        writer.event("gateway.retry.backoff", time: 1_700_000_000_500_000_000, attributes: ["gateway.duration_ms": .double(2.5)])
        writer.status(SpanStatus(code: .error, message: "503"))
        writer.end(time: 1_700_000_001_000_000_000)
    }

    /// `writer`'s spans as a request's body, walked down to its spans.
    static func spans(of writer: OTLPSpanWriter, serviceName: String = "svc") throws -> [[ProtobufReader.Field]] {
        let body = OTLPSpanEncoder(serviceName: serviceName).encode(spans: writer.buffer)
        let scopeSpans = try ProtobufReader.fields(Array(body.readableBytesView))[0].message()[1].message()
        #expect(scopeSpans.first?.number == 1, "scope")
        return try scopeSpans.dropFirst().map {
            #expect($0.number == 2)
            return try $0.message()
        }
    }

    @Test func anExportRequestHasTheProtocolsFields() throws {
        let writer = OTLPSpanWriter()
        Self.writeSpan(into: writer)
        Self.writeSpan(into: writer)
        #expect(writer.count == 2)
        let body = OTLPSpanEncoder(serviceName: "svc").encode(spans: writer.buffer)
        let request = try ProtobufReader.fields(Array(body.readableBytesView))
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
        #expect(scopeSpans[1].bytes == scopeSpans[2].bytes)

        // Fields in the order written: the end time last, as it is known last.
        let span = try scopeSpans[1].message()
        #expect(span.map(\.number) == [1, 2, 3, 4, 5, 6, 7, 9, 9, 9, 9, 11, 15, 8])
        #expect(span[0].bytes == [0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36])
        #expect(span[1].bytes == [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
        #expect(try span[2].string() == "congo=t61rcWkgMzE")
        #expect(span[3].bytes == [0, 0, 0, 0, 0, 0, 0, 7])
        #expect(try span[4].string() == "GET /users/{id}")
        #expect(span[5].wireType == 0 && span[5].value == 3, "SPAN_KIND_CLIENT")
        #expect(span[6].wireType == 1 && span[6].value == 1_700_000_000_000_000_000)
        #expect(span[13].wireType == 1 && span[13].value == 1_700_000_001_000_000_000)

        let method = try span[7].message()
        #expect(try method[0].string() == "http.request.method")
        #expect(try method[1].message()[0].number == 1 && method[1].message()[0].string() == "GET")
        let status = try span[8].message()[1].message()[0]
        #expect(status.number == 3 && status.value == 503, "int_value")
        let cancelled = try span[9].message()[1].message()[0]
        #expect(cancelled.number == 2 && cancelled.value == 1, "bool_value")
        let negative = try span[10].message()[1].message()[0]
        #expect(negative.number == 3 && negative.value == UInt64.max, "int_value, two's complement")

        let event = try span[11].message()
        #expect(event.map(\.number) == [1, 2, 3])
        #expect(event[0].wireType == 1 && event[0].value == 1_700_000_000_500_000_000)
        #expect(try event[1].string() == "gateway.retry.backoff")
        let duration = try event[2].message()[1].message()[0]
        #expect(duration.number == 4 && duration.wireType == 1 && Double(bitPattern: duration.value) == 2.5, "double_value")

        let spanStatus = try span[12].message()
        #expect(spanStatus.map(\.number) == [2, 3])
        #expect(try spanStatus[0].string() == "503")
        #expect(spanStatus[1].value == 2, "STATUS_CODE_ERROR")
    }

    @Test func aRootSpanHasNoParentNorTraceStateAndAnUnsetStatusIsLeftOut() throws {
        let writer = OTLPSpanWriter()
        writer.begin(.server, name: "GET /", trace: Self.trace, span: SpanID(value: 1), parent: nil, traceState: "", start: 5)
        writer.end(time: 6)
        let span = try Self.spans(of: writer)[0]
        #expect(span.map(\.number) == [1, 2, 5, 6, 7, 8])
        #expect(span[3].value == 2, "SPAN_KIND_SERVER")
    }

    /// A span's length takes 1, 2, 3 or 4 bytes: the span moves back over the
    /// room its length does not use, or forward past it, and reads back whole;
    /// the writer grows from a small room; after a reset it writes the same.
    @Test func spansOfEveryLengthAreFramed() throws {
        let writer = OTLPSpanWriter(capacity: 64)
        Self.writeSpan(into: writer)
        let first = Array(writer.bytes)
        writer.reset()
        #expect(writer.count == 0 && writer.bytes.isEmpty)
        Self.writeSpan(into: writer)
        #expect(Array(writer.bytes) == first)
        writer.reset()
        for length in [0, 200, 20_000, 3_000_000] {
            writer.begin(.server, name: "n", trace: Self.trace, span: SpanID(value: 9), parent: nil, traceState: "", start: 1)
            if length > 0 { writer.attribute("k", .string(String(repeating: "v", count: length))) }
            writer.end(time: 2)
        }
        #expect(writer.count == 4)
        let spans = try ProtobufReader.fields(Array(writer.bytes))
        #expect(spans.map(\.number) == [2, 2, 2, 2])
        for (span, length) in zip(spans, [0, 200, 20_000, 3_000_000]) {
            let fields = try span.message()
            #expect(fields.map(\.number) == (length > 0 ? [1, 2, 5, 6, 7, 9, 8] : [1, 2, 5, 6, 7, 8]))
            #expect(fields.last?.value == 2, "the end time, written last")
            if length > 0 { #expect(try fields[5].message()[1].message()[0].bytes.count == length) }
        }
    }

    /// `url.full` written in its pieces and a client address written from a
    /// piece of its string read back as the strings joined: IPv6 hosts in
    /// brackets, a scheme's default port left out, ports of every length.
    @Test(arguments: [
        (URLPieces(scheme: "http", host: "api.test", port: nil, target: "/users/42?page=2"), "http://api.test/users/42?page=2"),
        (URLPieces(scheme: "https", host: "origin.internal", port: 8443, target: "/v1"), "https://origin.internal:8443/v1"),
        (URLPieces(scheme: "http", host: "::1", port: 8, target: "/"), "http://[::1]:8/"),
        (URLPieces(scheme: "https", host: "2001:db8::1", port: nil, target: "*"), "https://[2001:db8::1]*"),
        (URLPieces(scheme: "http", host: "h", port: 65535, target: ""), "http://h:65535"),
        (URLPieces(scheme: "http", host: "h", port: 0, target: "/ü"), "http://h:0/ü"),
    ])
    func piecesAreWrittenAsTheStringTheyMake(url: URLPieces, expected: String) throws {
        #expect(url.text == expected)
        #expect(url.utf8Count == expected.utf8.count)
        let writer = OTLPSpanWriter(capacity: 64)
        writer.begin(.client, name: "n", trace: Self.trace, span: SpanID(value: 9), parent: nil, traceState: "", start: 1)
        writer.urlAttribute("url.full", url)
        let address = "10.0.0.7:51234"
        writer.attribute("client.address", address[..<address.firstIndex(of: ":")!])
        writer.end(time: 2)
        let span = try ProtobufReader.fields(Array(writer.bytes))[0].message()
        let attributes = try span.filter { $0.number == 9 }.map { try $0.message() }
        #expect(try attributes.map { try $0[0].string() } == ["url.full", "client.address"])
        #expect(try attributes.map { try $0[1].message()[0].string() } == [expected, "10.0.0.7"])
    }

    /// The pointer writer writes what a plain reference encoder (below) does, byte for byte, and exactly the sizes computed.
    @Test func thePointerWriterWritesWhatTheBufferWrites() {
        var expected = ByteBuffer()
        var written = ByteBuffer()
        let strings = ["", "a", "GET /users/{id}", "é-€-🙂", String(repeating: "x", count: 200)]
        let varints: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, UInt64.max]
        var size = 0
        for string in strings {
            expected.writeStringField(5, string)
            size += ProtobufSize.string(5, string)
        }
        for value in varints {
            expected.writeMessageHeader(11, size: Int(truncatingIfNeeded: value & 0xFFFF_FFFF))
            size += ProtobufSize.tag(11) + ProtobufSize.varint(value & 0xFFFF_FFFF)
        }
        let count = written.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<size]))
            for string in strings { writer.stringField(5, string) }
            for value in varints { writer.messageHeader(11, size: Int(truncatingIfNeeded: value & 0xFFFF_FFFF)) }
            return writer.offset
        }
        #expect(count == size)
        #expect(Array(written.readableBytesView) == Array(expected.readableBytesView))

        var ids = ByteBuffer()
        ids.writeWithUnsafeMutableBytes(minimumWritableBytes: 37) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<37]))
            writer.idField(1, 0x0102_0304_0506_0708, 0x090a_0b0c_0d0e_0f10)
            writer.idField(2, 0x00f0_67aa_0ba9_02b7)
            writer.fixed64Field(7, 0x0102_0304_0506_0708)
            return writer.offset
        }
        let expectedIDs: [UInt8] = [
            0x0a, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,  // trace id: 16 bytes, big-endian halves
            0x12, 8, 0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7,  // span id: 8 bytes, big-endian
            0x39, 8, 7, 6, 5, 4, 3, 2, 1,  // fixed64: little-endian
        ]
        #expect(Array(ids.readableBytesView) == expectedIDs)
    }

    @Test func varintSizesMatchWhatIsWritten() {
        for value: UInt64 in [0, 1, 127, 128, 16_383, 16_384, UInt64(UInt32.max), UInt64.max] {
            var buffer = ByteBuffer()
            buffer.writeVarint(value)
            #expect(buffer.readableBytes == ProtobufSize.varint(value), "\(value)")
        }
    }
}

/// A protobuf wire-format walker for the tests: a message's fields in order,
/// nested messages read on demand.
enum ProtobufReader {
    struct Failure: Error {}

    struct Field {
        var number: UInt64
        var wireType: UInt64
        /// A varint's or fixed64's value.
        var value: UInt64 = 0
        /// A length-delimited field's bytes.
        var bytes: [UInt8] = []

        func message() throws -> [Field] {
            guard wireType == 2 else { throw Failure() }
            return try ProtobufReader.fields(bytes)
        }

        func string() throws -> String {
            guard wireType == 2 else { throw Failure() }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    static func fields(_ bytes: [UInt8]) throws -> [Field] {
        var index = 0
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                guard index < bytes.count, shift < 64 else { throw Failure() }
                let byte = bytes[index]
                index += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
        }
        var fields: [Field] = []
        while index < bytes.count {
            let key = try varint()
            var field = Field(number: key >> 3, wireType: key & 7)
            switch field.wireType {
            case 0:
                field.value = try varint()
            case 1:
                guard index + 8 <= bytes.count else { throw Failure() }
                for offset in 0..<8 { field.value |= UInt64(bytes[index + offset]) << (8 * UInt64(offset)) }
                index += 8
            case 2:
                let length = Int(try varint())
                guard index + length <= bytes.count else { throw Failure() }
                field.bytes = Array(bytes[index..<index + length])
                index += length
            default:
                throw Failure()
            }
            fields.append(field)
        }
        return fields
    }
}

/// The wire format written the plain way, into a `ByteBuffer`: the reference
/// the pointer writer is compared with.
extension ByteBuffer {
    fileprivate mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            writeInteger(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        writeInteger(UInt8(truncatingIfNeeded: value))
    }

    fileprivate mutating func writeMessageHeader(_ field: UInt64, size: Int) {
        writeVarint(field << 3 | 2)
        writeVarint(UInt64(size))
    }

    fileprivate mutating func writeStringField(_ field: UInt64, _ value: String) {
        writeMessageHeader(field, size: value.utf8.count)
        writeString(value)
    }
}
