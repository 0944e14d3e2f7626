/// The W3C `tracestate` field's grammar (Trace Context Level 1, §3.3): at
/// most 32 comma-separated `key=value` members (empty members and spaces or
/// tabs around them allowed), each key once. A key is a simple key
/// (`lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/")`) or a
/// multi-tenant one (`tenant@system`); a value is up to 256 printable ASCII
/// characters but `,` and `=`, not ending in a space. An invalid field is
/// dropped (the parent kept), as the specification allows.
enum TraceState {
    static let maxMembers = 32

    static func isValid(_ value: String) -> Bool {
        var keys: Set<Substring> = []
        for member in value.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = member.trimmingSpacesAndTabs
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "=") else { return false }
            let key = trimmed[..<equals], memberValue = trimmed[trimmed.index(after: equals)...]
            guard isKey(key), isValue(memberValue), keys.insert(key).inserted else { return false }
        }
        return keys.count <= maxMembers
    }

    private static func isKey(_ key: Substring) -> Bool {
        let parts = key.split(separator: "@", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            return isKeyPart(parts[0], maxLength: 256, digitFirst: false)
        case 2:
            return isKeyPart(parts[0], maxLength: 241, digitFirst: true) && isKeyPart(parts[1], maxLength: 14, digitFirst: false)
        default:
            return false
        }
    }

    /// A lowercase letter (or a digit when `digitFirst`), then lowercase letters, digits, `_-*/`.
    private static func isKeyPart(_ part: Substring, maxLength: Int, digitFirst: Bool) -> Bool {
        let bytes = part.utf8
        guard let first = bytes.first, bytes.count <= maxLength else { return false }
        let isLower = { (byte: UInt8) in byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        guard isLower(first) || digitFirst && isDigit(first) else { return false }
        return bytes.allSatisfy { isLower($0) || isDigit($0) || "_-*/".utf8.contains($0) }
    }

    private static func isValue(_ value: Substring) -> Bool {
        let bytes = value.utf8
        guard let last = bytes.last, bytes.count <= 256, last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "=") }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpacesAndTabs: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result.removeFirst() }
        while let last = result.last, last == " " || last == "\t" { result.removeLast() }
        return result
    }
}
