#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif
import NIOPosix

/// Spans encoded for export as they are described (``SpanSink``, through
/// ``ExchangeSpans``): each appended to `bytes` as a `ScopeSpans.spans`
/// entry (field 2: its key, its length, its `Span` fields), ready to follow
/// an export request's preamble (``OTLPSpanEncoder``). Nothing is built
/// before: each field is sized, then written through a pointer into its room
/// (``ProtobufPointerWriter``), in memory of the writer's own that only grows.
/// Each event loop thread keeps one (``current``), emptied for each exchange
/// (``reset()``): the export queue copies what it wrote.
///
/// A span's length is known only once it ends: room for a three-byte length
/// is left after its key, and the span moves back over what the length does
/// not use (a few hundred bytes, once). Fields go in the order they come;
/// protobuf readers take a message's fields in any order (a repeated
/// field's entries keep theirs).
final class OTLPSpanWriter: SpanAttributeSink, @unchecked Sendable {
    /// `Span.SpanKind`: the gateway makes these two.
    enum Kind: Sendable, Equatable {
        /// The gateway's span of an exchange.
        case server
        /// One upstream attempt.
        case client

        /// `SPAN_KIND_SERVER` 2, `SPAN_KIND_CLIENT` 3.
        var protobufValue: UInt64 {
            switch self {
            case .server: 2
            case .client: 3
            }
        }
    }

    /// The written bytes, then room.
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    /// Bytes written.
    private var size = 0
    /// How many spans were ended.
    private(set) var count = 0
    /// Where the open span's length goes; nil when no span is open.
    private var lengthAt: Int?
    /// Writing fields outside a span (``beginFields()``), to be put in one later (``fields(_:)``).
    private var loose = false

    /// Bytes left for a span's length: a span of up to 2 MiB needs no more.
    static let lengthRoom = 3

    /// `capacity`: the room made at first (an exchange's spans take a few hundred bytes).
    init(capacity: Int = 2048) {
        self.capacity = max(64, capacity)
        self.storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    /// The spans written, each framed. Valid until the next write or ``reset()``.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: size) }

    /// `bytes` as an array, copied at once (`Array(bytes)` goes byte by byte
    /// through the collection).
    func copyBytes() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            if size > 0 { UnsafeMutableRawPointer(buffer.baseAddress!).copyMemory(from: storage, byteCount: size) }
            count = size
        }
    }

    /// Forgets every span written; the room is kept.
    func reset() {
        precondition(lengthAt == nil, "a span left open")
        size = 0
        count = 0
        loose = false
    }

    /// Until ``reset()``, attributes are written with no span around them:
    /// `bytes` are then fields that ``fields(_:)`` puts in a span later.
    func beginFields() {
        precondition(lengthAt == nil, "fields begun inside a span")
        loose = true
    }

    /// `encoded`, fields written after ``beginFields()``, added to the open span.
    func fields(_ encoded: UnsafeRawBufferPointer) {
        write(encoded.count) { $0.bytes(encoded) }
    }

    private static let threads = ThreadSpecificVariable<OTLPSpanWriter>()

    /// This thread's writer, empty.
    static func current() -> OTLPSpanWriter {
        if let writer = threads.currentValue {
            writer.reset()
            return writer
        }
        let writer = OTLPSpanWriter()
        threads.currentValue = writer
        return writer
    }

    /// Opens a span; `start` and every time below in nanoseconds since 1970.
    /// `traceState` empty: none. `parent` nil: a root span.
    func begin(_ kind: Kind, name: String, trace: TraceID, span: SpanID, parent: SpanID?, traceState: String, start: UInt64) {
        precondition(lengthAt == nil && !loose, "a span begun inside another, or among loose fields")
        let size = ProtobufSize.tag(2) + Self.lengthRoom
            + ProtobufSize.lengthDelimited(1, 16) + ProtobufSize.lengthDelimited(2, 8)
            + (traceState.isEmpty ? 0 : ProtobufSize.string(3, traceState))
            + (parent == nil ? 0 : ProtobufSize.lengthDelimited(4, 8))
            + ProtobufSize.string(5, name) + ProtobufSize.varintField(6, kind.protobufValue) + ProtobufSize.fixed64(7)
        lengthAt = self.size + ProtobufSize.tag(2)
        write(size) { writer in
            // ScopeSpans.spans = 2, its length written when it ends.
            writer.tag(2, .lengthDelimited)
            for _ in 0..<Self.lengthRoom { writer.byte(0) }
            writer.idField(1, trace.high, trace.low)
            writer.idField(2, span.value)
            if !traceState.isEmpty { writer.stringField(3, traceState) }
            if let parent { writer.idField(4, parent.value) }
            writer.stringField(5, name)
            writer.varintField(6, kind.protobufValue)
            writer.fixed64Field(7, start)
        }
    }

    /// `Span.attributes` = 9: one `KeyValue`.
    func attribute(_ key: String, _ value: SpanAttribute) {
        let size = OTLPSpanEncoder.size(key: key, value: value)
        write(ProtobufSize.lengthDelimited(9, size)) { OTLPSpanEncoder.write(key: key, value: value, size: size, field: 9, into: &$0) }
    }

    /// A string attribute given as a piece of a string, its bytes copied from where they are.
    func attribute(_ key: String, _ value: Substring) {
        let length = value.utf8.count
        let size = ProtobufSize.string(1, key) + ProtobufSize.lengthDelimited(2, ProtobufSize.lengthDelimited(1, length))
        write(ProtobufSize.lengthDelimited(9, size)) { writer in
            writer.messageHeader(9, size: size)
            writer.stringField(1, key)
            // AnyValue { string_value = 1 }
            writer.messageHeader(2, size: ProtobufSize.lengthDelimited(1, length))
            writer.messageHeader(1, size: length)
            writer.utf8(value)
        }
    }

    /// A string attribute `scheme://host[:port]target`, written in its pieces (no string is made).
    func urlAttribute(_ key: String, _ url: URLPieces) {
        let length = url.utf8Count
        // AnyValue { string_value = 1 }
        let value = ProtobufSize.lengthDelimited(1, length)
        let size = ProtobufSize.string(1, key) + ProtobufSize.lengthDelimited(2, value)
        write(ProtobufSize.lengthDelimited(9, size)) { writer in
            writer.messageHeader(9, size: size)
            writer.stringField(1, key)
            writer.messageHeader(2, size: value)
            writer.messageHeader(1, size: length)
            writer.utf8(url.scheme)
            writer.utf8("://")
            let brackets = url.bracketsHost
            if brackets { writer.byte(UInt8(ascii: "[")) }
            writer.utf8(url.host)
            if brackets { writer.byte(UInt8(ascii: "]")) }
            if let port = url.port {
                writer.byte(UInt8(ascii: ":"))
                writer.decimal(port, digits: URLPieces.digits(port))
            }
            writer.utf8(url.target)
        }
    }

    /// `Span.events` = 11: `Span.Event { time_unix_nano = 1, name = 2, attributes = 3 }`.
    func event(_ name: String, time: UInt64, attributes: SpanAttributes) {
        let size = ProtobufSize.fixed64(1) + ProtobufSize.string(2, name) + OTLPSpanEncoder.size(of: attributes, field: 3)
        write(ProtobufSize.lengthDelimited(11, size)) { writer in
            writer.messageHeader(11, size: size)
            writer.fixed64Field(1, time)
            writer.stringField(2, name)
            OTLPSpanEncoder.write(attributes, field: 3, into: &writer)
        }
    }

    /// `Span.status` = 15: `Status { message = 2, code = 3 }`.
    func status(_ status: SpanStatus) {
        let message = status.message.flatMap { $0.isEmpty ? nil : $0 }
        let size = (message.map { ProtobufSize.string(2, $0) } ?? 0) + ProtobufSize.varintField(3, status.code.protobufValue)
        write(ProtobufSize.lengthDelimited(15, size)) { writer in
            writer.messageHeader(15, size: size)
            if let message { writer.stringField(2, message) }
            writer.varintField(3, status.code.protobufValue)
        }
    }

    /// Closes the open span: its end time, then its length.
    func end(time: UInt64) {
        guard let lengthAt else { preconditionFailure("a span ended that was not begun") }
        write(ProtobufSize.fixed64(8)) { $0.fixed64Field(8, time) }
        let bodyStart = lengthAt + Self.lengthRoom
        let bodyLength = size - bodyStart
        let lengthSize = ProtobufSize.varint(UInt64(bodyLength))
        // How far the span's fields move: back when the length is shorter than its room.
        let shift = lengthSize - Self.lengthRoom
        if shift > 0 { reserve(shift) }
        let start = storage + lengthAt
        if shift != 0 { memmove(start + lengthSize, start + Self.lengthRoom, bodyLength) }
        var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(start: start, count: lengthSize))
        writer.varint(UInt64(bodyLength))
        size += shift
        self.lengthAt = nil
        count += 1
    }

    /// `count` bytes written by `body`, through a pointer, exactly.
    private func write(_ count: Int, _ body: (inout ProtobufPointerWriter) -> Void) {
        precondition(lengthAt != nil || loose, "a span's field written outside a span")
        reserve(count)
        var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(start: storage + size, count: count))
        body(&writer)
        precondition(writer.offset == count, "protobuf: a field's size computed wrong")
        size += count
    }

    /// Room for `count` more bytes.
    private func reserve(_ count: Int) {
        guard count > capacity - size else { return }
        var grown = capacity * 2
        while count > grown - size { grown *= 2 }
        let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
        moved.copyMemory(from: storage, byteCount: size)
        storage.deallocate()
        storage = moved
        capacity = grown
    }
}
