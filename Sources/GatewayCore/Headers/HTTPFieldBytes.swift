/// The bytes HTTP/1.1 allows in a field name and a field value (RFC 9110 §5.1,
/// §5.5), checked wherever the gateway reads or writes a head: client requests
/// (``RequestHeadValidator`` in the listener), upstream responses and the
/// request heads it writes upstream (the framing in GatewayUpstream).
public enum HTTPFieldBytes {
    /// tchar (RFC 9110 §5.6.2): what a field name is made of.
    @inlinable
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// HTAB, SP, VCHAR or obs-text: no CR, LF, NUL, DEL or other control.
    @inlinable
    public static func isFieldValueByte(_ byte: UInt8) -> Bool {
        byte == 9 || (byte >= 32 && byte != 127)
    }

    /// `name` in lowercase, as HTTP/2 sends names: the same string, with no
    /// copy, when it has no uppercase letter (most names a client sends).
    @inlinable
    public static func lowercasedName(_ name: String) -> String {
        hasUppercase(name) ? name.lowercased() : name
    }

    /// Whether `name` has an ASCII uppercase letter. On every field name of
    /// every HTTP/2 section and every request's host: a native string's bytes
    /// are read in place (the `String.UTF8View` iterator checked each index).
    @inlinable
    public static func hasUppercase(_ name: String) -> Bool {
        name.utf8.withContiguousStorageIfAvailable { bytes in bytes.contains(where: isUppercaseByte) }
            ?? name.utf8.contains(where: isUppercaseByte)
    }

    @inlinable
    static func isUppercaseByte(_ byte: UInt8) -> Bool {
        byte &- UInt8(ascii: "A") < 26
    }

    /// Whether HTTP/1.1 can carry a field read from an HTTP/2 field section
    /// (HTTP/2 frames any byte but NUL, CR and LF in a value, RFC 9113
    /// §8.2.1): a token name (a pseudo-field's `:` aside) and a value with no
    /// control byte.
    /// On every field of every HTTP/2 section, both ways: the bytes are read in
    /// place (a field's strings are native), with no index or slice per byte.
    public static func canCarry(name: String, value: String) -> Bool {
        let nameOK = name.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            let start = bytes.first == UInt8(ascii: ":") ? 1 : 0
            guard bytes.count > start else { return false }
            for index in start..<bytes.count where !isTokenByte(bytes[index]) { return false }
            return true
        } ?? slowTokenName(name)
        guard nameOK else { return false }
        return value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for byte in bytes where !isFieldValueByte(byte) { return false }
            return true
        } ?? value.utf8.allSatisfy(isFieldValueByte)
    }

    /// ``canCarry(name:value:)``'s name check for a string whose bytes are not contiguous (bridged).
    private static func slowTokenName(_ name: String) -> Bool {
        let nameBytes = name.utf8.first == UInt8(ascii: ":") ? name.utf8.dropFirst() : name.utf8[...]
        return !nameBytes.isEmpty && nameBytes.allSatisfy(isTokenByte)
    }
}
