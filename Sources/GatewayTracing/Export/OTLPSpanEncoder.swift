import NIOCore

/// Finished spans as the body of an OTLP/HTTP export: an
/// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest` in
/// protobuf, encoded by hand (``ProtobufWriting``). One `ResourceSpans` (the
/// resource's attributes: `service.name` and the SDK's), one `ScopeSpans`
/// (the gateway as the instrumentation scope), every span under it.
///
/// Field numbers as in `opentelemetry-proto` (`trace/v1/trace.proto`,
/// `common/v1/common.proto`, `resource/v1/resource.proto`); the Swift tests
/// walk the output's fields (`OTLPSpanEncoderTests`), the integration tests
/// decode it with the Python classes.
struct OTLPSpanEncoder: Sendable {
    /// The resource's attributes.
    let resource: SpanAttributes
    let scopeName: String
    let scopeVersion: String

    init(serviceName: String, scopeName: String = "gateway", scopeVersion: String = "1") {
        var resource = SpanAttributes()
        resource.set("service.name", value: .string(serviceName))
        resource.set("telemetry.sdk.name", value: .string("gateway"))
        resource.set("telemetry.sdk.language", value: .string("swift"))
        self.resource = resource
        self.scopeName = scopeName
        self.scopeVersion = scopeVersion
    }

    /// `spans` as one request's body, appended to `buffer`.
    func encode(_ spans: ArraySlice<FinishedSpan>, into buffer: inout ByteBuffer) {
        var spanSizes: [Int] = []
        spanSizes.reserveCapacity(spans.count)
        var spansSize = 0
        for span in spans {
            let size = Self.size(of: span)
            spanSizes.append(size)
            spansSize += ProtobufSize.lengthDelimited(2, size)
        }
        let scopeSize = ProtobufSize.string(1, scopeName) + ProtobufSize.string(2, scopeVersion)
        let scopeSpansSize = ProtobufSize.lengthDelimited(1, scopeSize) + spansSize
        let resourceSize = Self.size(of: resource, field: 1)
        let resourceSpansSize = ProtobufSize.lengthDelimited(1, resourceSize) + ProtobufSize.lengthDelimited(2, scopeSpansSize)
        buffer.reserveCapacity(buffer.writerIndex + ProtobufSize.lengthDelimited(1, resourceSpansSize))

        // Everything before the spans, through one pointer writer too.
        let preamble = ProtobufSize.tag(1) + ProtobufSize.varint(UInt64(resourceSpansSize))
            + ProtobufSize.lengthDelimited(1, resourceSize)
            + ProtobufSize.tag(2) + ProtobufSize.varint(UInt64(scopeSpansSize))
            + ProtobufSize.lengthDelimited(1, scopeSize)
        let resource = self.resource
        let scopeName = self.scopeName
        let scopeVersion = self.scopeVersion
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: preamble) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<preamble]))
            // ExportTraceServiceRequest.resource_spans = 1
            writer.messageHeader(1, size: resourceSpansSize)
            // ResourceSpans.resource = 1 { Resource.attributes = 1 }
            writer.messageHeader(1, size: resourceSize)
            Self.write(resource, field: 1, into: &writer)
            // ResourceSpans.scope_spans = 2
            writer.messageHeader(2, size: scopeSpansSize)
            // ScopeSpans.scope = 1 { InstrumentationScope.name = 1, version = 2 }
            writer.messageHeader(1, size: scopeSize)
            writer.stringField(1, scopeName)
            writer.stringField(2, scopeVersion)
            precondition(writer.offset == preamble, "protobuf: the request's frame size computed wrong")
            return preamble
        }
        // ScopeSpans.spans = 2: each span written through a pointer into its exact room.
        for (span, size) in zip(spans, spanSizes) {
            let framed = ProtobufSize.lengthDelimited(2, size)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: framed) { room in
                var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<framed]))
                writer.messageHeader(2, size: size)
                Self.write(span, into: &writer)
                precondition(writer.offset == framed, "protobuf: a span's size computed wrong")
                return framed
            }
        }
    }

    /// `spans` as a request's body.
    func encode(_ spans: ArraySlice<FinishedSpan>) -> ByteBuffer {
        var buffer = ByteBuffer()
        encode(spans, into: &buffer)
        return buffer
    }

    // MARK: Span

    static func size(of span: FinishedSpan) -> Int {
        var total = ProtobufSize.lengthDelimited(1, 16) + ProtobufSize.lengthDelimited(2, 8)
        if !span.traceState.isEmpty { total += ProtobufSize.string(3, span.traceState) }
        if span.parentID != nil { total += ProtobufSize.lengthDelimited(4, 8) }
        total += ProtobufSize.string(5, span.name)
        total += ProtobufSize.varintField(6, span.kind.protobufValue)
        total += ProtobufSize.fixed64(7) + ProtobufSize.fixed64(8)
        total += size(of: span.attributes, field: 9)
        for event in span.events { total += ProtobufSize.lengthDelimited(11, size(of: event)) }
        if let status = span.status { total += ProtobufSize.lengthDelimited(15, size(of: status)) }
        return total
    }

    /// A `Span`'s fields (its key and length already written).
    static func write(_ span: FinishedSpan, into writer: inout ProtobufPointerWriter) {
        writer.idField(1, span.traceID.high, span.traceID.low)
        writer.idField(2, span.spanID.value)
        if !span.traceState.isEmpty { writer.stringField(3, span.traceState) }
        if let parent = span.parentID { writer.idField(4, parent.value) }
        writer.stringField(5, span.name)
        writer.varintField(6, span.kind.protobufValue)
        writer.fixed64Field(7, span.start)
        writer.fixed64Field(8, span.end)
        write(span.attributes, field: 9, into: &writer)
        for event in span.events {
            // Span.Event { time_unix_nano = 1, name = 2, attributes = 3 }
            writer.messageHeader(11, size: size(of: event))
            writer.fixed64Field(1, event.time)
            writer.stringField(2, event.name)
            write(event.attributes, field: 3, into: &writer)
        }
        if let status = span.status {
            // Status { message = 2, code = 3 }
            writer.messageHeader(15, size: size(of: status))
            if let message = status.message, !message.isEmpty { writer.stringField(2, message) }
            writer.varintField(3, status.code.protobufValue)
        }
    }

    static func size(of event: FinishedSpan.Event) -> Int {
        ProtobufSize.fixed64(1) + ProtobufSize.string(2, event.name) + size(of: event.attributes, field: 3)
    }

    static func size(of status: SpanStatus) -> Int {
        let message = status.message.map { $0.isEmpty ? 0 : ProtobufSize.string(2, $0) } ?? 0
        return message + ProtobufSize.varintField(3, status.code.protobufValue)
    }

    // MARK: Attributes

    /// Every attribute as a repeated `KeyValue` field numbered `field`.
    static func size(of attributes: SpanAttributes, field: UInt64) -> Int {
        attributes.pairs.reduce(0) { $0 + ProtobufSize.lengthDelimited(field, size(key: $1.key, value: $1.value)) }
    }

    static func write(_ attributes: SpanAttributes, field: UInt64, into writer: inout ProtobufPointerWriter) {
        for (key, value) in attributes.pairs {
            // KeyValue { key = 1, value = 2 AnyValue }
            writer.messageHeader(field, size: size(key: key, value: value))
            writer.stringField(1, key)
            writer.messageHeader(2, size: size(of: value))
            switch value {
            case .string(let string): writer.stringField(1, string)
            case .bool(let bool): writer.varintField(2, bool ? 1 : 0)
            case .int64(let int): writer.varintField(3, UInt64(bitPattern: int))
            case .double(let double): writer.fixed64Field(4, double.bitPattern)
            }
        }
    }

    /// A `KeyValue`.
    static func size(key: String, value: SpanAttribute) -> Int {
        ProtobufSize.string(1, key) + ProtobufSize.lengthDelimited(2, size(of: value))
    }

    /// An `AnyValue`: `string_value` 1, `bool_value` 2, `int_value` 3, `double_value` 4.
    static func size(of value: SpanAttribute) -> Int {
        switch value {
        case .string(let string): ProtobufSize.string(1, string)
        case .bool: ProtobufSize.varintField(2, 1)
        case .int64(let int): ProtobufSize.varintField(3, UInt64(bitPattern: int))
        case .double: ProtobufSize.fixed64(4)
        }
    }
}
