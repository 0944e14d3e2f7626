import NIOCore

/// Spans written as OTLP protobuf as their ``SpanPlan`` decides them: the
/// export's ``SpanFieldSink``. When an exchange finishes (``ExchangeSpans``),
/// each of its spans goes into `buffer` as a `ScopeSpans.spans` field (key 2,
/// length, `Span`), ready to be queued and sent as they are
/// (``SpanExportQueue``, ``OTLPRequestFrame``): no span value is built,
/// copied or walked again on the exporter's thread.
///
/// A `Span`'s fields in the order `opentelemetry-proto` numbers them
/// (`trace/v1/trace.proto`): the header (``SpanHeader``: ids 1, 2,
/// `trace_state` 3, `parent_span_id` 4, `name` 5, `kind` 6, times 7 and 8),
/// then `attributes` 9 (`KeyValue`s), `events` 11 (`Span.Event`:
/// `time_unix_nano` 1, `name` 2, `attributes` 3), `status` 15 (`Status`:
/// `message` 2, `code` 3). Each piece's size is known before it is written
/// (``ProtobufSize``) and written through a pointer into exactly that room
/// (``ProtobufPointerWriter``). The span's own length, known only at its end,
/// goes into two bytes kept before it (a span of 128 bytes to 16 KiB, which
/// nearly all are); a span whose length needs one byte or three is moved to
/// fit, so every varint stays minimal.
struct OTLPSpanWriter: SpanFieldSink {
    /// The bytes kept for a span's length: a varint of 128 to 16,383.
    static let lengthRoom = 2

    /// The spans written, each as a `ScopeSpans.spans` field.
    private(set) var buffer: ByteBuffer
    /// How many spans `buffer` holds.
    private(set) var spanCount = 0
    /// Places the events' instants on the wall clock.
    let clock: WallClock
    /// Where the open span's length goes; nil between spans.
    private var lengthIndex: Int?

    /// A writer appending to `buffer` (a thread's scratch buffer: ``SpanScratch``).
    init(buffer: ByteBuffer = ByteBuffer(), clock: WallClock) {
        self.buffer = buffer
        self.clock = clock
    }

    /// Starts a span: its field's key, the room for its length, its header.
    /// The plan's fields follow, then ``endSpan()``.
    mutating func beginSpan(_ header: SpanHeader) {
        precondition(lengthIndex == nil, "protobuf: a span begun inside another")
        let size = Self.headerSize(header)
        let total = ProtobufSize.tag(2) + Self.lengthRoom + size
        let start = buffer.writerIndex
        write(total) { writer in
            // ScopeSpans.spans = 2
            writer.tag(2, .lengthDelimited)
            for _ in 0..<Self.lengthRoom { writer.byte(0) }
            Self.writeHeader(header, into: &writer)
        }
        lengthIndex = start + ProtobufSize.tag(2)
    }

    /// Ends the open span: its length written before it.
    mutating func endSpan() {
        guard let lengthIndex else { preconditionFailure("protobuf: a span ended that was not begun") }
        self.lengthIndex = nil
        let bodyStart = lengthIndex + Self.lengthRoom
        let length = buffer.writerIndex - bodyStart
        if ProtobufSize.varint(UInt64(length)) == Self.lengthRoom {
            buffer.setInteger(UInt8(truncatingIfNeeded: length) | 0x80, at: lengthIndex)
            buffer.setInteger(UInt8(truncatingIfNeeded: length >> 7), at: lengthIndex + 1)
        } else {
            // Rare: shorter than 128 bytes or longer than 16 KiB. The span moves to follow its minimal length.
            guard let body = buffer.getBytes(at: bodyStart, length: length) else { preconditionFailure("protobuf: a span's bytes are gone") }
            buffer.moveWriterIndex(to: lengthIndex)
            write(ProtobufSize.varint(UInt64(length))) { writer in writer.varint(UInt64(length)) }
            buffer.writeBytes(body)
        }
        spanCount += 1
    }

    /// The spans written, the writer left empty (its buffer goes to the queue, then back to the thread's scratch).
    mutating func takeBuffer() -> ByteBuffer {
        var taken = ByteBuffer()
        swap(&taken, &buffer)
        spanCount = 0
        return taken
    }

    // MARK: SpanFieldSink

    mutating func attribute(_ key: StaticString, string value: String) {
        attribute(key, text: value[...])
    }

    mutating func attribute(_ key: StaticString, string value: Substring) {
        attribute(key, text: value)
    }

    mutating func attribute(_ key: StaticString, url value: UpstreamURL) {
        let count = value.utf8Count
        let valueSize = ProtobufSize.stringValue(utf8Count: count)
        write(Self.attributeSize(key, valueSize: valueSize)) { writer in
            writer.keyValueHeader(9, key, valueSize: valueSize)
            writer.tag(1, .lengthDelimited)
            writer.varint(UInt64(count))
            value.forEachPart { writer.utf8($0) }
        }
    }

    mutating func attribute(_ key: StaticString, int value: Int64) {
        let valueSize = ProtobufSize.intValue(value)
        write(Self.attributeSize(key, valueSize: valueSize)) { writer in
            writer.keyValueHeader(9, key, valueSize: valueSize)
            writer.intValue(value)
        }
    }

    mutating func attribute(_ key: StaticString, bool value: Bool) {
        let valueSize = ProtobufSize.boolValue
        write(Self.attributeSize(key, valueSize: valueSize)) { writer in
            writer.keyValueHeader(9, key, valueSize: valueSize)
            writer.boolValue(value)
        }
    }

    mutating func event(_ name: StaticString, at time: ContinuousClock.Instant, duration: Duration, retryReason: String?) {
        let timestamp = clock.timestamp(time)
        let milliseconds = SpanPlan.milliseconds(duration)
        let durationSize = ProtobufSize.keyValue(SpanPlan.durationKey, valueSize: ProtobufSize.doubleValue)
        let reasonValueSize = retryReason.map { ProtobufSize.stringValue($0) } ?? 0
        let reasonSize = ProtobufSize.keyValue(SpanPlan.retryReasonKey, valueSize: reasonValueSize)
        // Span.Event { time_unix_nano = 1, name = 2, attributes = 3 }
        var eventSize = ProtobufSize.fixed64(1) + ProtobufSize.string(2, name) + ProtobufSize.lengthDelimited(3, durationSize)
        if retryReason != nil { eventSize += ProtobufSize.lengthDelimited(3, reasonSize) }
        write(ProtobufSize.lengthDelimited(11, eventSize)) { writer in
            writer.messageHeader(11, size: eventSize)
            writer.fixed64Field(1, timestamp)
            writer.stringField(2, name)
            writer.keyValueHeader(3, SpanPlan.durationKey, valueSize: ProtobufSize.doubleValue)
            writer.doubleValue(milliseconds)
            if let retryReason {
                writer.keyValueHeader(3, SpanPlan.retryReasonKey, valueSize: reasonValueSize)
                writer.stringValue(retryReason)
            }
        }
    }

    mutating func status(_ status: SpanStatus) {
        // Status { message = 2, code = 3 }
        let message = status.message.flatMap { $0.isEmpty ? nil : $0 }
        let size = (message.map { ProtobufSize.string(2, $0) } ?? 0) + ProtobufSize.varintField(3, status.code.protobufValue)
        write(ProtobufSize.lengthDelimited(15, size)) { writer in
            writer.messageHeader(15, size: size)
            if let message { writer.stringField(2, message) }
            writer.varintField(3, status.code.protobufValue)
        }
    }

    // MARK: Writing

    /// A string attribute, whole or a part.
    private mutating func attribute(_ key: StaticString, text value: Substring) {
        let valueSize = ProtobufSize.stringValue(value)
        write(Self.attributeSize(key, valueSize: valueSize)) { writer in
            writer.keyValueHeader(9, key, valueSize: valueSize)
            writer.stringValue(value)
        }
    }

    /// `Span.attributes` = 9: one `KeyValue` field, key and length included.
    private static func attributeSize(_ key: StaticString, valueSize: Int) -> Int {
        ProtobufSize.lengthDelimited(9, ProtobufSize.keyValue(key, valueSize: valueSize))
    }

    /// Appends `size` bytes, as `body` writes them (exactly that many).
    private mutating func write(_ size: Int, _ body: (inout ProtobufPointerWriter) -> Void) {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<size]))
            body(&writer)
            precondition(writer.offset == size, "protobuf: a span's field size computed wrong")
            return size
        }
    }

    // MARK: Header

    /// `Span`'s fields 1 to 8.
    static func headerSize(_ header: SpanHeader) -> Int {
        var total = ProtobufSize.lengthDelimited(1, 16) + ProtobufSize.lengthDelimited(2, 8)
        if let traceState = header.traceState, !traceState.isEmpty { total += ProtobufSize.string(3, traceState) }
        if header.parentID != nil { total += ProtobufSize.lengthDelimited(4, 8) }
        total += ProtobufSize.lengthDelimited(5, header.name.utf8Count)
        total += ProtobufSize.varintField(6, header.kind.protobufValue)
        total += ProtobufSize.fixed64(7) + ProtobufSize.fixed64(8)
        return total
    }

    static func writeHeader(_ header: SpanHeader, into writer: inout ProtobufPointerWriter) {
        writer.idField(1, header.traceID.high, header.traceID.low)
        writer.idField(2, header.spanID.value)
        if let traceState = header.traceState, !traceState.isEmpty { writer.stringField(3, traceState) }
        if let parent = header.parentID { writer.idField(4, parent.value) }
        writer.tag(5, .lengthDelimited)
        writer.varint(UInt64(header.name.utf8Count))
        writer.utf8(header.name.method)
        writer.utf8(" ")
        writer.utf8(header.name.route)
        writer.varintField(6, header.kind.protobufValue)
        writer.fixed64Field(7, header.start)
        writer.fixed64Field(8, header.end)
    }
}
