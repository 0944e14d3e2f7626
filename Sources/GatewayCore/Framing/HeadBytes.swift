/// Word-at-a-time searches over the bytes of a head: eight bytes per step
/// instead of one, for the scans ``HTTP1HeadLines`` makes of every request and
/// response head (its end, its line ends, its line count, its field values).
///
/// Each search has a byte-at-a-time reference it must agree with on every
/// input (`HeadBytesTests`); the word masks are exact per byte (no borrow runs
/// from one byte into the next), so the first set bit is the first match.
public enum HeadBytes {
    /// What a search looks for.
    public enum Target: Sendable {
        /// LF.
        case lineFeed
        /// CR or LF.
        case lineBreak
    }

    @inlinable static var low7: UInt64 { 0x7F7F_7F7F_7F7F_7F7F }
    @inlinable static var ones: UInt64 { 0x0101_0101_0101_0101 }

    /// 0x80 in each byte of `word` that is zero, 0 in the others.
    @inlinable
    static func zeroBytes(_ word: UInt64) -> UInt64 {
        ~(((word & low7) &+ low7) | word | low7)
    }

    /// 0x80 in each byte of `word` equal to `byte`.
    @inlinable
    static func bytes(_ word: UInt64, equalTo byte: UInt8) -> UInt64 {
        zeroBytes(word ^ (ones &* UInt64(byte)))
    }

    @inlinable
    static func matches(_ word: UInt64, _ target: Target) -> UInt64 {
        switch target {
        case .lineFeed: bytes(word, equalTo: 10)
        case .lineBreak: bytes(word, equalTo: 10) | bytes(word, equalTo: 13)
        }
    }

    @inlinable
    static func isMatch(_ byte: UInt8, _ target: Target) -> Bool {
        switch target {
        case .lineFeed: byte == 10
        case .lineBreak: byte == 10 || byte == 13
        }
    }

    /// The eight bytes at `offset`, the first in the lowest bits.
    @inlinable
    static func word(_ raw: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The offset of the first `target` byte in `start..<end`, if any.
    @inlinable
    public static func first(_ target: Target, in raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int? {
        var i = start
        while i + 8 <= end {
            let found = matches(word(raw, at: i), target)
            if found != 0 { return i + found.trailingZeroBitCount >> 3 }
            i += 8
        }
        while i < end {
            if isMatch(raw[i], target) { return i }
            i += 1
        }
        return nil
    }

    /// How many `target` bytes `start..<end` holds.
    @inlinable
    public static func count(_ target: Target, in raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var total = 0
        var i = start
        while i + 8 <= end {
            total += matches(word(raw, at: i), target).nonzeroBitCount
            i += 8
        }
        while i < end {
            if isMatch(raw[i], target) { total += 1 }
            i += 1
        }
        return total
    }

    /// Whether `start..<end` holds a byte a field value may not hold: a control
    /// byte other than HTAB, or DEL (``HTTPFieldBytes/isFieldValueByte(_:)``).
    @inlinable
    public static func containsNonFieldValueByte(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Bool {
        var i = start
        while i + 8 <= end {
            let w = word(raw, at: i)
            // Below 0x20 with the top bit clear: adding 0x60 to the low seven bits
            // reaches 0x80 exactly for 0x20 and above, and never carries out of a byte.
            let control = ~(((w & low7) &+ (ones &* 0x60)) | w) & ~low7
            let bad = (control & ~bytes(w, equalTo: 9)) | bytes(w, equalTo: 127)
            if bad != 0 { return true }
            i += 8
        }
        while i < end {
            if !HTTPFieldBytes.isFieldValueByte(raw[i]) { return true }
            i += 1
        }
        return false
    }
}
