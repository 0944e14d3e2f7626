/// The line-level syntax of an HTTP/1.1 head (RFC 9112 §2.2, §5), shared by the
/// gateway's two parsers: client request heads (the listener) and upstream
/// response heads (GatewayUpstream). Strict where a lenient parser would let a
/// head be read two ways: bare LF or CR line ends, obs-fold and whitespace
/// before a field's colon are refused. Inlinable: both parsers call these
/// for every line of every head.
public enum HTTP1HeadLines {
    /// What a search for the end of a head found.
    public enum HeadScan: Equatable, Sendable {
        /// The head ends `length` bytes in (its CRLFCRLF included).
        case complete(length: Int)
        case incomplete
        /// An LF without its CR: the head is malformed, whether or not it ends.
        case bareLineFeed
    }

    /// Looks for a head's CRLFCRLF from `start` on (what an earlier search did
    /// not look at); a bare LF on the way makes the head malformed at once,
    /// not only when its end comes (it may never come).
    @inlinable
    public static func scanHead(_ raw: UnsafeRawBufferPointer, from start: Int) -> HeadScan {
        var i = start
        while let lf = HeadBytes.first(.lineFeed, in: raw, from: i, to: raw.count) {
            guard lf > 0, raw[lf - 1] == 13 else { return .bareLineFeed }
            if lf >= 3, raw[lf - 2] == 10, raw[lf - 3] == 13 { return .complete(length: lf + 1) }
            i = lf + 1
        }
        return .incomplete
    }

    /// How many LFs follow `start`: one more than the field lines (the head's last empty line).
    @inlinable
    public static func lineCount(in raw: UnsafeRawBufferPointer, from start: Int) -> Int {
        HeadBytes.count(.lineFeed, in: raw, from: start, to: raw.count)
    }

    /// The offset of the CR of the next CRLF at or after `start`; nil when a
    /// bare CR or LF comes first, or no line end is in.
    @inlinable
    public static func lineEnd(in raw: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let i = HeadBytes.first(.lineBreak, in: raw, from: start, to: raw.count),
              raw[i] == 13, i + 1 < raw.count, raw[i + 1] == 10 else { return nil }  // bare LF or CR, or no line end
        return i
    }

    /// `name: value` between `start` and the line's CR at `end`, with optional
    /// whitespace around the value and none before the colon; nil if malformed
    /// (a name that is no token, a line without a colon, a control byte in the value).
    @inlinable
    public static func field(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> (name: String, value: String)? {
        guard let (colon, valueStart, valueEnd) = fieldBounds(raw, from: start, to: end) else { return nil }
        return (text(raw, start..<colon), text(raw, valueStart..<valueEnd))
    }

    /// The bytes in `range` as a string (a head's bytes were checked: no repair is needed).
    @inlinable
    public static func text(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: raw[range]), as: UTF8.self)
    }

    /// Where a field line's colon is, and its value without the whitespace
    /// around it; nil if the line is malformed (as ``field(_:from:to:)``).
    @inlinable
    public static func fieldBounds(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int) -> (colon: Int, valueStart: Int, valueEnd: Int)? {
        var colon = start
        while colon < end, raw[colon] != UInt8(ascii: ":") {
            guard HTTPFieldBytes.isTokenByte(raw[colon]) else { return nil }  // obs-fold, space before the colon
            colon += 1
        }
        guard colon > start, colon < end else { return nil }
        var valueStart = colon + 1
        var valueEnd = end
        while valueStart < valueEnd, raw[valueStart] == 32 || raw[valueStart] == 9 { valueStart += 1 }
        while valueEnd > valueStart, raw[valueEnd - 1] == 32 || raw[valueEnd - 1] == 9 { valueEnd -= 1 }
        guard !HeadBytes.containsNonFieldValueByte(raw, from: valueStart, to: valueEnd) else { return nil }
        return (colon, valueStart, valueEnd)
    }

    /// Whether `raw` holds exactly `text`'s bytes (compared as raw bytes, not
    /// through the generic `String.UTF8View` collection).
    @inlinable
    public static func equals(_ raw: UnsafeRawBufferPointer, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { raw.elementsEqual(UnsafeRawBufferPointer($0)) }
    }

    /// ``equals(_:_:)`` for a literal.
    @inlinable
    public static func equals(_ raw: UnsafeRawBufferPointer, _ text: StaticString) -> Bool {
        text.withUTF8Buffer { raw.elementsEqual(UnsafeRawBufferPointer($0)) }
    }

    /// Whether the bytes from `start` to `end` spell `lowercase`, ignoring ASCII case.
    @inlinable
    public static func equalsIgnoringCase(_ raw: UnsafeRawBufferPointer, from start: Int, to end: Int, _ lowercase: StaticString) -> Bool {
        // A literal's bytes, read in place: a `String`'s `withUTF8` retained
        // it and checked its representation on every call.
        lowercase.withUTF8Buffer { expected in
            guard end - start == expected.count else { return false }
            for i in 0..<expected.count {
                let x = raw[start + i]
                guard ((x >= 65 && x <= 90) ? x | 0x20 : x) == expected[i] else { return false }
            }
            return true
        }
    }
}
