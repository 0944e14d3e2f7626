/// The protobuf wire format, as much of it as OTLP's trace messages need,
/// written by hand: varints, 64-bit fixed fields and length-delimited fields
/// (strings, bytes, nested messages). A nested message's length comes first,
/// so ``ProtobufSize`` computes it before the message is written
/// (``OTLPSpanEncoder``), and ``ProtobufPointerWriter`` writes into exactly
/// that room: no scratch buffers, no copies.
enum WireType: UInt64 {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case fixed32 = 5
}

/// The encoded sizes of the wire format's pieces.
enum ProtobufSize {
    /// Bytes of `value` as a varint: 1 to 10.
    static func varint(_ value: UInt64) -> Int {
        value == 0 ? 1 : (64 - value.leadingZeroBitCount + 6) / 7
    }

    /// A field's key.
    static func tag(_ field: UInt64) -> Int {
        varint(field << 3)
    }

    /// A length-delimited field of `length` bytes, key and length included.
    static func lengthDelimited(_ field: UInt64, _ length: Int) -> Int {
        tag(field) + varint(UInt64(length)) + length
    }

    /// A `string` field.
    static func string(_ field: UInt64, _ value: String) -> Int {
        lengthDelimited(field, value.utf8.count)
    }

    /// A varint field.
    static func varintField(_ field: UInt64, _ value: UInt64) -> Int {
        tag(field) + varint(value)
    }

    /// A `fixed64` or `double` field.
    static func fixed64(_ field: UInt64) -> Int {
        tag(field) + 8
    }
}
