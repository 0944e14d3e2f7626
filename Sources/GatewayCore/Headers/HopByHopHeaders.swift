public import NIOHTTP1

/// Hop-by-hop header handling (RFC 9110 §7.6.1): what a proxy must not forward.
/// On the hot path of every request: compares names without allocating.
public enum HopByHopHeaders {
    /// Always hop-by-hop, whatever `Connection` says (lowercase).
    public static let names: [String] = literalNames.map(\.description)
    /// ``names`` as literals, for comparing bytes with no string in between.
    @usableFromInline static let literalNames: [StaticString] = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer",
        "transfer-encoding", "upgrade", "proxy-authorization", "proxy-authenticate",
    ]

    /// Removes hop-by-hop headers and those named in `Connection`, keeping the
    /// order and duplicates of every end-to-end header. In place: a response
    /// whose only hop-by-hop field is `Connection: keep-alive` (most of them)
    /// costs one scan and one removal, no allocation.
    public static func removeAll(from headers: inout HTTPHeaders) {
        var present: UInt16 = 0  // bit i: `names[i]` is there
        var named: [Substring] = []
        for (name, value) in headers where isAlwaysHopByHop(name) {
            if let index = names.firstIndex(where: { equalsIgnoringCase(name, $0) }) { present |= 1 << index }
            guard equalsIgnoringCase(name, "connection") else { continue }
            appendFieldsNamed(inConnection: value, to: &named)
        }
        for (index, name) in names.enumerated() where present & (1 << index) != 0 { headers.remove(name: name) }
        for name in named { headers.remove(name: String(name)) }
    }

    /// Appends the field names a `Connection` value lists (its options but
    /// `keep-alive`, which goes anyway, and `close`, which names no field).
    @inlinable
    public static func appendFieldsNamed(inConnection value: String, to named: inout [Substring]) {
        forEachToken(in: value) { token in
            if !equalsIgnoringCase("keep-alive", token), !equalsIgnoringCase("close", token) { named.append(token) }
        }
    }

    /// Calls `body` with each non-empty token of a comma-separated field value,
    /// trimmed of spaces and tabs (without `split`'s array). By UTF-8 byte: a
    /// search by `Character` would pay for grapheme breaking.
    @inlinable
    public static func forEachToken(in value: String, _ body: (Substring) -> Void) {
        let bytes = value.utf8
        var start = bytes.startIndex
        while start != bytes.endIndex {
            let comma = bytes[start...].firstIndex(of: UInt8(ascii: ",")) ?? bytes.endIndex
            let token = value[start..<comma].trimmingASCIISpaces()
            if !token.isEmpty { body(token) }
            start = comma == bytes.endIndex ? comma : bytes.index(after: comma)
        }
    }

    /// Appends this gateway to `Via` (RFC 9110 §7.6.3), e.g. `1.1 gateway`.
    public static func addVia(to headers: inout HTTPHeaders, version: HTTPVersion, pseudonym: String) {
        headers.add(name: "Via", value: version == .http1_1 ? "1.1 \(pseudonym)" : "\(version.major).\(version.minor) \(pseudonym)")
    }

    @inlinable
    public static func isAlwaysHopByHop(_ name: String) -> Bool {
        // Most names are rejected by their length alone (no hop-by-hop name is 3-6,
        // 8, 9 or over 19 bytes long); the rest by their first letter.
        switch name.utf8.count {
        case 2, 7, 10, 16, 17, 18, 19: break
        default: return false
        }
        guard let first = name.utf8.first else { return false }
        switch first | 0x20 {
        case UInt8(ascii: "c"), UInt8(ascii: "p"), UInt8(ascii: "k"), UInt8(ascii: "t"), UInt8(ascii: "u"): break
        default: return false
        }
        for candidate in names where equalsIgnoringCase(name, candidate) { return true }
        return false
    }

    /// ``isAlwaysHopByHop(_:)`` on a name's bytes (from `start` to `end`), as the framer reads it.
    @inlinable
    public static func isAlwaysHopByHop(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        switch end - start {
        case 2, 7, 10, 16, 17, 18, 19: break
        default: return false
        }
        switch raw[start] | 0x20 {
        case UInt8(ascii: "c"), UInt8(ascii: "p"), UInt8(ascii: "k"), UInt8(ascii: "t"), UInt8(ascii: "u"): break
        default: return false
        }
        for candidate in literalNames where HTTP1HeadLines.equalsIgnoringCase(raw, from: start, to: end, candidate) { return true }
        return false
    }

    /// ASCII case-insensitive comparison (both sides folded: `lowercase` may be in any case).
    @inlinable
    public static func equalsIgnoringCase<S: StringProtocol>(_ name: String, _ lowercase: S) -> Bool {
        let a = name.utf8
        let b = lowercase.utf8
        guard a.count == b.count else { return false }
        var i = a.startIndex
        var j = b.startIndex
        while i != a.endIndex {
            let x = a[i]
            let lowered = (x >= 65 && x <= 90) ? x | 0x20 : x
            let y = b[j]
            let loweredY = (y >= 65 && y <= 90) ? y | 0x20 : y
            guard lowered == loweredY else { return false }
            i = a.index(after: i)
            j = b.index(after: j)
        }
        return true
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (OWS, RFC 9110 §5.6.3).
    /// By UTF-8 byte, not `Character` (no grapheme breaking); the bounds stay
    /// on scalar boundaries since only ASCII bytes are skipped.
    @inlinable
    public func trimmingASCIISpaces() -> Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start != end, bytes[start] == 32 || bytes[start] == 9 { start = bytes.index(after: start) }
        while start != end {
            let last = bytes.index(before: end)
            guard bytes[last] == 32 || bytes[last] == 9 else { break }
            end = last
        }
        return self[start..<end]
    }
}
