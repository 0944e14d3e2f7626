/// The wire format (``ProtobufWriting``'s pieces) written through a pointer
/// into room made for it beforehand, its exact size computed first
/// (``ProtobufSize``): the encoder writes each span so (``OTLPSpanEncoder``),
/// without the capacity and uniqueness checks a `ByteBuffer` makes on each of
/// its many small writes. Every write is bounds-checked all the same: a size
/// computed short stops the process rather than write past the room.
struct ProtobufPointerWriter {
    private let room: UnsafeMutableRawBufferPointer
    /// Bytes written so far.
    private(set) var offset = 0

    init(_ room: UnsafeMutableRawBufferPointer) {
        self.room = room
    }

    /// Checks that `count` more bytes fit.
    private func ensure(_ count: Int) {
        precondition(count <= room.count - offset, "protobuf: writing past the size computed")
    }

    mutating func byte(_ value: UInt8) {
        ensure(1)
        put(value)
    }

    /// One byte where room was ensured.
    private mutating func put(_ value: UInt8) {
        room.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    /// `value` as a base-128 varint, least significant group first; its room
    /// checked once (most are one byte: keys, short lengths).
    mutating func varint(_ value: UInt64) {
        if value < 0x80 {
            byte(UInt8(truncatingIfNeeded: value))
            return
        }
        ensure(ProtobufSize.varint(value))
        var value = value
        while value >= 0x80 {
            put(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        put(UInt8(truncatingIfNeeded: value))
    }

    mutating func tag(_ field: UInt64, _ wireType: WireType) {
        varint(field << 3 | wireType.rawValue)
    }

    mutating func varintField(_ field: UInt64, _ value: UInt64) {
        tag(field, .varint)
        varint(value)
    }

    /// 8 bytes as they are in memory: `value` already in the order wanted.
    private mutating func word(_ value: UInt64) {
        ensure(8)
        room.storeBytes(of: value, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    /// A `fixed64` (or `double`, as its bits) field: 8 bytes, little-endian.
    mutating func fixed64Field(_ field: UInt64, _ value: UInt64) {
        tag(field, .fixed64)
        word(value.littleEndian)
    }

    /// A `bytes` field of one id: 8 bytes, big-endian (a span id).
    mutating func idField(_ field: UInt64, _ value: UInt64) {
        tag(field, .lengthDelimited)
        varint(8)
        word(value.bigEndian)
    }

    /// A `bytes` field of two: 16 bytes, each half big-endian (a trace id).
    mutating func idField(_ field: UInt64, _ high: UInt64, _ low: UInt64) {
        tag(field, .lengthDelimited)
        varint(16)
        word(high.bigEndian)
        word(low.bigEndian)
    }

    /// A `string` field: its UTF-8 bytes copied at once.
    mutating func stringField(_ field: UInt64, _ value: String) {
        tag(field, .lengthDelimited)
        varint(UInt64(value.utf8.count))
        utf8(value)
    }

    /// The UTF-8 bytes of `value`, copied at once (a piece of a field written in pieces).
    mutating func utf8(_ value: String) {
        bytes(of: value.utf8)
    }

    /// The UTF-8 bytes of `value`, copied at once.
    mutating func utf8(_ value: Substring) {
        bytes(of: value.utf8)
    }

    /// `value` (not negative) in decimal, as `digits` ASCII digits.
    mutating func decimal(_ value: Int, digits: Int) {
        ensure(digits)
        var rest = value
        for index in stride(from: offset + digits - 1, through: offset, by: -1) {
            room.storeBytes(of: UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10), toByteOffset: index, as: UInt8.self)
            rest /= 10
        }
        offset += digits
    }

    /// A string's UTF-8 view copied at once where it is contiguous (else byte by byte: a bridged string).
    private mutating func bytes<View: Collection<UInt8>>(of view: View) {
        let count = view.count
        ensure(count)
        guard count > 0 else { return }
        let target = UnsafeMutableRawBufferPointer(rebasing: room[offset..<offset + count])
        let copied: Void? = view.withContiguousStorageIfAvailable { source in
            target.copyMemory(from: UnsafeRawBufferPointer(source))
        }
        if copied == nil {
            var index = 0
            for byte in view {
                target[index] = byte
                index += 1
            }
        }
        offset += count
    }

    /// `source` as it is: fields encoded before.
    mutating func bytes(_ source: UnsafeRawBufferPointer) {
        ensure(source.count)
        guard source.count > 0 else { return }
        UnsafeMutableRawBufferPointer(rebasing: room[offset..<offset + source.count]).copyMemory(from: source)
        offset += source.count
    }

    /// A nested message's key and length; its fields follow.
    mutating func messageHeader(_ field: UInt64, size: Int) {
        tag(field, .lengthDelimited)
        varint(UInt64(size))
    }
}
