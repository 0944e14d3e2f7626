/// Percent-encoding for query parameters and `application/x-www-form-urlencoded`
/// bodies: every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`)
/// becomes `%XX`, so a value can never break out of its parameter.
public enum PercentEncoding {
    /// `a b&c` → `a%20b%26c`.
    public static func encode(_ text: String) -> String {
        encode(text, spaceAsPlus: false)
    }

    /// Form encoding (RFC 6749 Appendix B): as `encode`, but a space becomes `+`.
    public static func formEncode(_ text: String) -> String {
        encode(text, spaceAsPlus: true)
    }

    private static func encode(_ text: String, spaceAsPlus: Bool) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if spaceAsPlus && byte == UInt8(ascii: " ") {
                out += "+"
            } else if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(hexDigit(byte >> 4))
                out.unicodeScalars.append(hexDigit(byte & 0x0F))
            }
        }
        return out
    }

    /// `name=value&...` with both sides form-encoded, in the given order.
    public static func form(_ pairs: [(String, String)]) -> String {
        pairs.map { formEncode($0.0) + "=" + formEncode($0.1) }.joined(separator: "&")
    }

    /// Decodes `%XX` (and `+` as a space when `plusIsSpace`); invalid escapes are kept as they are.
    public static func decode(_ text: Substring, plusIsSpace: Bool = false) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            let byte = utf8[i]
            if byte == UInt8(ascii: "%"), i + 2 < utf8.count, let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2]) {
                bytes.append(high << 4 | low)
                i += 3
                continue
            }
            bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            i += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
