/// A W3C trace id: 16 bytes, as two big-endian halves (`high` is the first 8
/// bytes). Never all zero when the gateway makes one (``TraceIDGenerator``).
struct TraceID: Sendable, Hashable {
    var high: UInt64
    var low: UInt64

    /// 32 lowercase hex digits, as read by ``TraceParent``; nil when not that.
    init?(hex: some StringProtocol) {
        let bytes = Array(hex.utf8)
        guard bytes.count == 32, let high = HexID.value(bytes[0..<16]), let low = HexID.value(bytes[16..<32]) else { return nil }
        self.init(high: high, low: low)
    }

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// 32 lowercase hex digits.
    var hex: String { HexID.hex(high) + HexID.hex(low) }
}

/// A W3C span (parent) id: 8 bytes, big-endian. Never zero when the gateway makes one.
struct SpanID: Sendable, Hashable {
    var value: UInt64

    /// 16 lowercase hex digits; nil when not that.
    init?(hex: some StringProtocol) {
        let bytes = Array(hex.utf8)
        guard bytes.count == 16, let value = HexID.value(bytes[...]) else { return nil }
        self.value = value
    }

    init(value: UInt64) {
        self.value = value
    }

    /// 16 lowercase hex digits.
    var hex: String { HexID.hex(value) }
}

/// Ids as lowercase hex and back.
enum HexID {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `value` as 16 lowercase hex digits, leading zeros kept.
    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            for index in 0..<16 {
                buffer[index] = digits[Int((value >> UInt64(60 - 4 * index)) & 0x0F)]
            }
            return 16
        }
    }

    /// Up to 16 hex digits (either case) as a number; nil on any other byte.
    static func value(_ bytes: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in bytes {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}
