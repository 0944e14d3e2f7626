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
        let spanSizes = spans.map { Self.size(of: $0) }
        let scopeSize = ProtobufSize.string(1, scopeName) + ProtobufSize.string(2, scopeVersion)
        let scopeSpansSize = ProtobufSize.lengthDelimited(1, scopeSize) + spanSizes.reduce(0) { $0 + ProtobufSize.lengthDelimited(2, $1) }
        let resourceSize = Self.size(of: resource, field: 1)
        let resourceSpansSize = ProtobufSize.lengthDelimited(1, resourceSize) + ProtobufSize.lengthDelimited(2, scopeSpansSize)
        buffer.reserveCapacity(buffer.writerIndex + ProtobufSize.lengthDelimited(1, resourceSpansSize))

        // ExportTraceServiceRequest.resource_spans = 1
        buffer.writeMessageHeader(1, size: resourceSpansSize)
        // ResourceSpans.resource = 1 { Resource.attributes = 1 }
        buffer.writeMessageHeader(1, size: resourceSize)
        Self.write(resource, field: 1, into: &buffer)
        // ResourceSpans.scope_spans = 2
        buffer.writeMessageHeader(2, size: scopeSpansSize)
        // ScopeSpans.scope = 1 { InstrumentationScope.name = 1, version = 2 }
        buffer.writeMessageHeader(1, size: scopeSize)
        buffer.writeStringField(1, scopeName)
        buffer.writeStringField(2, scopeVersion)
        // ScopeSpans.spans = 2
        for (span, size) in zip(spans, spanSizes) {
            buffer.writeMessageHeader(2, size: size)
            Self.write(span, into: &buffer)
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
    static func write(_ span: FinishedSpan, into buffer: inout ByteBuffer) {
        buffer.writeIDField(1, span.traceID.high, span.traceID.low)
        buffer.writeIDField(2, span.spanID.value)
        if !span.traceState.isEmpty { buffer.writeStringField(3, span.traceState) }
        if let parent = span.parentID { buffer.writeIDField(4, parent.value) }
        buffer.writeStringField(5, span.name)
        buffer.writeVarintField(6, span.kind.protobufValue)
        buffer.writeFixed64Field(7, span.start)
        buffer.writeFixed64Field(8, span.end)
        write(span.attributes, field: 9, into: &buffer)
        for event in span.events {
            // Span.Event { time_unix_nano = 1, name = 2, attributes = 3 }
            buffer.writeMessageHeader(11, size: size(of: event))
            buffer.writeFixed64Field(1, event.time)
            buffer.writeStringField(2, event.name)
            write(event.attributes, field: 3, into: &buffer)
        }
        if let status = span.status {
            // Status { message = 2, code = 3 }
            buffer.writeMessageHeader(15, size: size(of: status))
            if let message = status.message, !message.isEmpty { buffer.writeStringField(2, message) }
            buffer.writeVarintField(3, status.code.protobufValue)
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

    static func write(_ attributes: SpanAttributes, field: UInt64, into buffer: inout ByteBuffer) {
        for (key, value) in attributes.pairs {
            // KeyValue { key = 1, value = 2 AnyValue }
            buffer.writeMessageHeader(field, size: size(key: key, value: value))
            buffer.writeStringField(1, key)
            buffer.writeMessageHeader(2, size: size(of: value))
            switch value {
            case .string(let string): buffer.writeStringField(1, string)
            case .bool(let bool): buffer.writeVarintField(2, bool ? 1 : 0)
            case .int64(let int): buffer.writeVarintField(3, UInt64(bitPattern: int))
            case .double(let double): buffer.writeFixed64Field(4, double.bitPattern)
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
