/// The protobuf wire format, as much of it as OTLP's trace messages need,
/// written by hand: varints, 64-bit fixed fields and length-delimited fields
/// (strings, bytes, nested messages). A nested message's length comes first,
/// so ``ProtobufSize`` computes it before the message is written, and
/// ``ProtobufPointerWriter`` writes into exactly that room. Every piece of a
/// span (``OTLPSpanWriter``) has a size known before it is written: an
/// attribute's `KeyValue` is its key's length and its value's.
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
    static func string(_ field: UInt64, _ value: some StringProtocol) -> Int {
        lengthDelimited(field, value.utf8.count)
    }

    /// A `string` field of a literal (an attribute's key, an event's name).
    static func string(_ field: UInt64, _ value: StaticString) -> Int {
        lengthDelimited(field, value.utf8Count)
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

extension StaticString {
    /// The number of its UTF-8 bytes, whatever its representation (a
    /// one-scalar literal has no pointer to count from).
    var utf8Count: Int {
        hasPointerRepresentation ? utf8CodeUnitCount : withUTF8Buffer { $0.count }
    }
}
