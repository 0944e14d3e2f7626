extension HTTP1ResponseHeadParser {
    /// Adds one `Content-Length` field's value (`raw[range]`, trimmed) to
    /// `length`: false when it is not decimal or disagrees. A list of identical
    /// values (`5, 5`) is one length, as RFC 9110 §8.6 allows. Read from the
    /// head's bytes: no string is made of the value.
    static func mergeContentLength(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, into length: inout Int?) -> Bool {
        var start = range.lowerBound
        while true {
            var comma = start
            while comma < range.upperBound, raw[comma] != UInt8(ascii: ",") { comma += 1 }
            guard let value = decimal(raw, start..<comma), length == nil || length == value else { return false }
            length = value
            if comma == range.upperBound { return true }
            start = comma + 1
        }
    }

    /// A non-negative decimal made of digits only (at most 18 of them, spaces
    /// and tabs around them allowed), else nil.
    private static func decimal(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end, raw[start] == UInt8(ascii: " ") || raw[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, raw[end - 1] == UInt8(ascii: " ") || raw[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        guard start < end, end - start <= 18 else { return nil }
        var value = 0
        for i in start..<end {
            let byte = raw[i]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }
}
