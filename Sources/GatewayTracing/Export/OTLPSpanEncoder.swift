import NIOCore

/// Encoded spans as the body of an OTLP/HTTP export: an
/// `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest` in
/// protobuf, encoded by hand (``ProtobufWriting``). One `ResourceSpans` (the
/// resource's attributes: `service.name` and the SDK's), one `ScopeSpans`
/// (the gateway as the instrumentation scope), every span under it, as
/// ``OTLPSpanWriter`` wrote them.
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

    /// A request's body holding `spans`: `ScopeSpans.spans` entries, each framed (``OTLPSpanWriter``).
    func encode(spans: ByteBuffer) -> ByteBuffer {
        let spansSize = spans.readableBytes
        let scopeSize = ProtobufSize.string(1, scopeName) + ProtobufSize.string(2, scopeVersion)
        let scopeSpansSize = ProtobufSize.lengthDelimited(1, scopeSize) + spansSize
        let resourceSize = Self.size(of: resource, field: 1)
        let resourceSpansSize = ProtobufSize.lengthDelimited(1, resourceSize) + ProtobufSize.lengthDelimited(2, scopeSpansSize)
        let preamble = ProtobufSize.tag(1) + ProtobufSize.varint(UInt64(resourceSpansSize))
            + ProtobufSize.lengthDelimited(1, resourceSize)
            + ProtobufSize.tag(2) + ProtobufSize.varint(UInt64(scopeSpansSize))
            + ProtobufSize.lengthDelimited(1, scopeSize)
        var buffer = ByteBufferAllocator().buffer(capacity: preamble + spansSize)
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
        // ScopeSpans.spans = 2, as written.
        buffer.writeImmutableBuffer(spans)
        return buffer
    }

    // MARK: Attributes

    /// Every attribute as a repeated `KeyValue` field numbered `field`.
    static func size(of attributes: SpanAttributes, field: UInt64) -> Int {
        attributes.pairs.reduce(0) { $0 + ProtobufSize.lengthDelimited(field, size(key: $1.key, value: $1.value)) }
    }

    static func write(_ attributes: SpanAttributes, field: UInt64, into writer: inout ProtobufPointerWriter) {
        for (key, value) in attributes.pairs {
            write(key: key, value: value, size: size(key: key, value: value), field: field, into: &writer)
        }
    }

    /// One attribute as a `KeyValue { key = 1, value = 2 AnyValue }` field
    /// numbered `field`; `size`: ``size(key:value:)``.
    static func write(key: String, value: SpanAttribute, size: Int, field: UInt64, into writer: inout ProtobufPointerWriter) {
        writer.messageHeader(field, size: size)
        writer.stringField(1, key)
        writer.messageHeader(2, size: self.size(of: value))
        switch value {
        case .string(let string): writer.stringField(1, string)
        case .bool(let bool): writer.varintField(2, bool ? 1 : 0)
        case .int64(let int): writer.varintField(3, UInt64(bitPattern: int))
        case .double(let double): writer.fixed64Field(4, double.bitPattern)
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
