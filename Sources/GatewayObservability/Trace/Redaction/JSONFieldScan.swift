/// Redacts named fields of JSON text that does not parse as one document
/// (bytes after it, invalid UTF-8, cut short, several documents), by bytes.
///
/// A key is a string token followed by `:`; its name is decoded (escapes,
/// `\uXXXX` included) and compared lowercased with `fields`. The value after
/// a matching key, a string, an object or array (to its matching bracket,
/// strings skipped) or a bare literal, becomes `"[REDACTED]"`; a value cut
/// short runs to the end. Every other byte is copied.
///
/// Text this reader can misread (a stray quote puts it out of step with the
/// strings) could hide a key from it, so what it keeps is checked: no other
/// string token may contain a field name once decoded, and the bytes outside
/// string tokens may hold neither a field name (in any case) nor a backslash
/// (which valid JSON has only inside strings). When the check fails the scan
/// answers nil, and the body is not shown.
struct JSONFieldScan {
    let fields: Set<String>

    /// The redacted bytes (`bytes` themselves when nothing matched), or nil
    /// when the scan cannot vouch for them.
    func redacted(_ bytes: [UInt8]) -> [UInt8]? {
        let names = fields.map { Array($0.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        // The bytes outside string tokens, a NUL for each token (no name runs across one).
        var outside: [UInt8] = []
        var changed = false
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\"") else {
                out.append(bytes[index])
                outside.append(bytes[index])
                index += 1
                continue
            }
            let (end, terminated) = Self.stringEnd(bytes, from: index)
            out.append(contentsOf: bytes[index..<end])
            outside.append(0)
            let name = Self.decodedName(bytes[(index + 1)..<(terminated ? end - 1 : end)])
            index = end
            if terminated, fields.contains(name), let valueStart = Self.valueStart(bytes, afterKeyEndingAt: index) {
                out.append(contentsOf: bytes[index..<valueStart])
                out.append(contentsOf: "\"\(TraceRedactor.bodyPlaceholder)\"".utf8)
                index = Self.valueEnd(bytes, from: valueStart)
                changed = true
            } else if Self.containsAny(of: names, in: Array(name.utf8)[...]) {
                return nil
            }
        }
        guard !outside.contains(UInt8(ascii: "\\")), !Self.containsAny(of: names, in: outside[...]) else { return nil }
        return changed ? out : bytes
    }

    /// Where the value of a key whose string token ends at `index` starts
    /// (after blanks, `:`, blanks); nil when no `:` follows (not a key).
    static func valueStart(_ bytes: [UInt8], afterKeyEndingAt index: Int) -> Int? {
        var colon = index
        while colon < bytes.count, isWhitespace(bytes[colon]) { colon += 1 }
        guard colon < bytes.count, bytes[colon] == UInt8(ascii: ":") else { return nil }
        var start = colon + 1
        while start < bytes.count, isWhitespace(bytes[start]) { start += 1 }
        return start
    }

    /// Whether one of `names` (lowercase) occurs in `bytes`, ASCII letters in any case.
    static func containsAny(of names: [[UInt8]], in bytes: ArraySlice<UInt8>) -> Bool {
        for name in names where !name.isEmpty && name.count <= bytes.count {
            var start = bytes.startIndex
            while start <= bytes.endIndex - name.count {
                if zip(bytes[start..<(start + name.count)], name).allSatisfy({ lowercased($0) == $1 }) { return true }
                start += 1
            }
        }
        return false
    }

    /// The index after the string token opening at `start` (after its closing
    /// quote), and whether it was closed; a backslash escapes the next byte.
    static func stringEnd(_ bytes: [UInt8], from start: Int) -> (end: Int, terminated: Bool) {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return (index + 1, true)
            default: index += 1
            }
        }
        return (bytes.count, false)
    }

    /// The index after the value starting at `start`: a string, a bracketed
    /// object or array (strings inside skipped), or a literal up to a delimiter.
    static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int {
        guard start < bytes.count else { return start }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, from: start).end
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index = stringEnd(bytes, from: index).end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return bytes.count
        default:
            var index = start
            while index < bytes.count, !isWhitespace(bytes[index]),
                bytes[index] != UInt8(ascii: ","), bytes[index] != UInt8(ascii: "}"), bytes[index] != UInt8(ascii: "]")
            {
                index += 1
            }
            return index
        }
    }

    /// A key's name: JSON escapes decoded (an invalid one kept as written), lowercased.
    static func decodedName(_ raw: ArraySlice<UInt8>) -> String {
        guard raw.contains(UInt8(ascii: "\\")) else { return String(decoding: raw, as: UTF8.self).lowercased() }
        var scalars = String.UnicodeScalarView()
        var utf16: [UInt16] = []
        var index = raw.startIndex
        var plain: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: plain, as: UTF8.self).unicodeScalars)
            plain.removeAll()
            scalars.append(contentsOf: String(decoding: utf16, as: UTF16.self).unicodeScalars)
            utf16.removeAll()
        }
        while index < raw.endIndex {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.endIndex else {
                if !utf16.isEmpty { flush() }
                plain.append(byte)
                index += 1
                continue
            }
            let escaped = raw[index + 1]
            if escaped == UInt8(ascii: "u"), index + 6 <= raw.endIndex,
                let unit = UInt16(String(decoding: raw[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16)
            {
                if !plain.isEmpty { flush() }
                utf16.append(unit)
                index += 6
                continue
            }
            if !utf16.isEmpty { flush() }
            let simple: [UInt8: UInt8] = [0x62: 0x08, 0x66: 0x0C, 0x6E: 0x0A, 0x72: 0x0D, 0x74: 0x09]
            plain.append(simple[escaped] ?? escaped)
            index += 2
        }
        flush()
        return String(scalars).lowercased()
    }

    /// JSON's whitespace: space, tab, line feed, carriage return.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
