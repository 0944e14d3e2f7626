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
    var hex: String {
        String(unsafeUninitializedCapacity: 32) { buffer in
            HexID.write(high, into: buffer, at: 0)
            HexID.write(low, into: buffer, at: 16)
            return 32
        }
    }
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
    /// A nibble (0...15) as its lowercase hex digit.
    static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }

    /// `value` as 16 lowercase hex digits at `buffer[offset...]`.
    static func write(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        for index in 0..<16 {
            buffer[offset + index] = digit(UInt8(truncatingIfNeeded: value >> UInt64(60 - 4 * index)) & 0x0F)
        }
    }

    /// `value` as 16 lowercase hex digits, leading zeros kept.
    static func hex(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { buffer in
            write(value, into: buffer, at: 0)
            return 16
        }
    }

    /// A version-`00` `traceparent` value, `00-<trace>-<span>-<flags>`: its 55 bytes written in place.
    static func traceparent(trace: TraceID, span: SpanID, flags: UInt8) -> String {
        String(unsafeUninitializedCapacity: 55) { buffer in
            buffer[0] = UInt8(ascii: "0")
            buffer[1] = UInt8(ascii: "0")
            buffer[2] = UInt8(ascii: "-")
            write(trace.high, into: buffer, at: 3)
            write(trace.low, into: buffer, at: 19)
            buffer[35] = UInt8(ascii: "-")
            write(span.value, into: buffer, at: 36)
            buffer[52] = UInt8(ascii: "-")
            buffer[53] = digit(flags >> 4)
            buffer[54] = digit(flags & 0x0F)
            return 55
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
