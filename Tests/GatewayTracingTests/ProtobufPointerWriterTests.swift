import NIOCore
import Testing

@testable import GatewayTracing

/// The wire format's pieces (``ProtobufPointerWriter``, ``ProtobufSize``)
/// against the plain way of writing them, into a `ByteBuffer` (below): the
/// same bytes, and exactly the sizes computed.
@Suite struct ProtobufPointerWriterTests {
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

    /// Literals (keys, event names) and strings written in parts (a name, a URL) give the bytes of the whole string.
    @Test func literalsAndPartsWriteWhatAStringDoes() {
        var expected = ByteBuffer()
        expected.writeStringField(1, "gateway.duration_ms")
        expected.writeStringField(5, "GET /users/{id}")
        let key: StaticString = "gateway.duration_ms"
        let single: StaticString = "x"
        expected.writeStringField(2, "x")
        let size = ProtobufSize.string(1, key) + ProtobufSize.lengthDelimited(5, 15) + ProtobufSize.string(2, single)
        #expect(size == expected.readableBytes)
        var written = ByteBuffer()
        written.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { room in
            var writer = ProtobufPointerWriter(UnsafeMutableRawBufferPointer(rebasing: room[..<size]))
            writer.stringField(1, key)
            writer.tag(5, .lengthDelimited)
            writer.varint(15)
            let name = "GET /users/{id}"
            writer.utf8(name[..<name.firstIndex(of: " ")!])
            writer.utf8(" ")
            writer.utf8(name[name.index(after: name.firstIndex(of: " ")!)...])
            writer.stringField(2, single)
            return writer.offset
        }
        #expect(Array(written.readableBytesView) == Array(expected.readableBytesView))
        #expect(key.utf8Count == 19 && single.utf8Count == 1)
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
