import NIOCore

/// The body of an OTLP/HTTP export around a chunk of encoded spans
/// (``SpanChunk``): an `opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`
/// in protobuf, one `ResourceSpans` (the resource's attributes:
/// `service.name` and the SDK's), one `ScopeSpans` (the gateway as the
/// instrumentation scope), every span of the chunk under it. The resource
/// and the scope are encoded once, at start; an export writes the three
/// message headers, those two and the chunk's bytes: one copy of each.
///
/// Field numbers as in `opentelemetry-proto` (`collector/trace/v1/trace_service.proto`:
/// `resource_spans` 1; `trace/v1/trace.proto`: `ResourceSpans.resource` 1,
/// `scope_spans` 2, `ScopeSpans.scope` 1, `spans` 2; `resource/v1/resource.proto`:
/// `attributes` 1; `common/v1/common.proto`: `InstrumentationScope.name` 1,
/// `version` 2). The Swift tests walk the output's fields, the integration
/// tests decode it with the Python classes.
struct OTLPRequestFrame: Sendable {
    /// `ResourceSpans.resource` = 1: key, length, `Resource`.
    let resource: ByteBuffer
    /// `ScopeSpans.scope` = 1: key, length, `InstrumentationScope`.
    let scope: ByteBuffer

    init(serviceName: String, scopeName: String = "gateway", scopeVersion: String = "1") {
        // Resource { attributes = 1 (KeyValue) }
        let attributes: [(key: StaticString, value: String)] = [
            ("service.name", serviceName), ("telemetry.sdk.name", "gateway"), ("telemetry.sdk.language", "swift"),
        ]
        let resourceSize = attributes.reduce(0) {
            $0 + ProtobufSize.lengthDelimited(1, ProtobufSize.keyValue($1.key, valueSize: ProtobufSize.stringValue($1.value)))
        }
        self.resource = Self.encoded(ProtobufSize.lengthDelimited(1, resourceSize)) { writer in
            writer.messageHeader(1, size: resourceSize)
            for (key, value) in attributes {
                writer.keyValueHeader(1, key, valueSize: ProtobufSize.stringValue(value))
                writer.stringValue(value)
            }
        }
        // InstrumentationScope { name = 1, version = 2 }
        let scopeSize = ProtobufSize.string(1, scopeName) + ProtobufSize.string(2, scopeVersion)
        self.scope = Self.encoded(ProtobufSize.lengthDelimited(1, scopeSize)) { writer in
            writer.messageHeader(1, size: scopeSize)
            writer.stringField(1, scopeName)
            writer.stringField(2, scopeVersion)
        }
    }

    /// `chunk`'s spans as one request's body.
    func body(for chunk: SpanChunk) -> ByteBuffer {
        let scopeSpansSize = scope.readableBytes + chunk.bytes.readableBytes
        let resourceSpansSize = resource.readableBytes + ProtobufSize.lengthDelimited(2, scopeSpansSize)
        var body = ByteBuffer()
        body.reserveCapacity(ProtobufSize.lengthDelimited(1, resourceSpansSize))
        // ExportTraceServiceRequest.resource_spans = 1 { resource = 1, scope_spans = 2 { scope = 1, spans = 2... } }
        Self.writeHeader(1, size: resourceSpansSize, into: &body)
        body.writeImmutableBuffer(resource)
        Self.writeHeader(2, size: scopeSpansSize, into: &body)
        body.writeImmutableBuffer(scope)
        body.writeImmutableBuffer(chunk.bytes)
        return body
    }

    /// A nested message's key and length.
    private static func writeHeader(_ field: UInt64, size: Int, into buffer: inout ByteBuffer) {
        let headerSize = ProtobufSize.tag(field) + ProtobufSize.varint(UInt64(size))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: headerSize) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<headerSize]))
            writer.messageHeader(field, size: size)
            return writer.offset
        }
    }

    /// `size` bytes, as `body` writes them (exactly that many).
    private static func encoded(_ size: Int, _ body: (inout ProtobufPointerWriter) -> Void) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<size]))
            body(&writer)
            precondition(writer.offset == size, "protobuf: the request's frame size computed wrong")
            return size
        }
        return buffer
    }
}
