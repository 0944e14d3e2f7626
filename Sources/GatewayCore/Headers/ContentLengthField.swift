/// A `Content-Length` field's value read strictly (RFC 9110 §8.6), from an
/// HTTP/1.1 head's bytes or an HTTP/2 field: decimal digits only (at most 18,
/// spaces and tabs around them allowed); a list of identical values (`5, 5`)
/// is one length, as §8.6 allows; several fields must agree. No string is
/// made of the value.
package enum ContentLengthField {
    /// Adds one field's value (`raw[range]`) to `length`: false when it is not
    /// decimal or disagrees with what `length` holds.
    package static func merge(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>, into length: inout Int?) -> Bool {
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

    /// ``merge(_:_:into:)`` for a field value held as a string (an HTTP/2 field's).
    package static func merge(_ value: String, into length: inout Int?) -> Bool {
        var value = value
        return value.withUTF8 { merge(UnsafeRawBufferPointer($0), 0..<$0.count, into: &length) }
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
