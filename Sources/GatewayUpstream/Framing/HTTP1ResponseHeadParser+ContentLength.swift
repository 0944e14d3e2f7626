extension HTTP1ResponseHeadParser {
    /// Adds one `Content-Length` field's value to `length`: false when it is not
    /// decimal or disagrees. A list of identical values (`5, 5`) is one length, as
    /// RFC 9110 §8.6 allows.
    static func mergeContentLength(_ field: String, into length: inout Int?) -> Bool {
        var rest = Substring(field)
        repeat {
            let comma = rest.utf8.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            guard let value = decimal(rest[..<comma]), length == nil || length == value else { return false }
            length = value
            rest = comma == rest.endIndex ? rest[comma...] : rest[rest.utf8.index(after: comma)...]
        } while !rest.isEmpty
        return true
    }

    /// A non-negative decimal made of digits only (at most 18 of them), else nil.
    private static func decimal(_ text: Substring) -> Int? {
        var utf8 = text.utf8
        while utf8.first == UInt8(ascii: " ") || utf8.first == UInt8(ascii: "\t") { utf8 = utf8.dropFirst() }
        while utf8.last == UInt8(ascii: " ") || utf8.last == UInt8(ascii: "\t") { utf8 = utf8.dropLast() }
        guard !utf8.isEmpty, utf8.count <= 18 else { return nil }
        var value = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
