/// Where quoted shell text goes. A curl line is quoted once, word by word,
/// into either a `String` (the line as text: logs, the admin page, `trace`
/// commands) or straight into the bytes of a JSON string (``JSONStringText``:
/// the trace record's `curl` fields, escaped as they are written, with no
/// string made for the line on the writer thread).
protocol ShellText {
    /// Empty text.
    init()
    mutating func write(_ text: Substring)
    mutating func write(_ text: String)
}

extension String: ShellText {
    @inline(__always)
    mutating func write(_ text: Substring) { self += text }

    @inline(__always)
    mutating func write(_ text: String) { self += text }
}

/// The inside of a JSON string, appended to `bytes`: `"` and `\` escaped,
/// control characters as `\n`-style or `\u00XX` escapes, everything else
/// (UTF-8) as is. The quotes around it are the caller's.
struct JSONStringText: ShellText {
    var bytes: [UInt8] = []

    mutating func write(_ text: Substring) { write(utf8: text.utf8) }

    mutating func write(_ text: String) { write(utf8: text.utf8) }

    /// Native and small strings (all the writer makes) without a copy.
    private mutating func write(utf8: some Sequence<UInt8>) {
        if utf8.withContiguousStorageIfAvailable({ append(escaping: $0) }) == nil {
            Array(utf8).withUnsafeBufferPointer { append(escaping: $0) }
        }
    }

    /// Runs of bytes that need no escape (nearly all of them) are copied at
    /// once; they are found eight bytes at a time.
    mutating func append(escaping utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var runStart = 0
        var index = 0
        while index < count {
            if index + 8 <= count, !Self.mayNeedEscape(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                index += 8
                continue
            }
            let end = min(index + 8, count)
            while index < end {
                let byte = base[index]
                if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index - runStart))
                    escape(byte)
                    runStart = index + 1
                }
                index += 1
            }
        }
        bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
    }

    /// Whether one of the eight bytes of `word` is below 0x20, `"` or `\\`
    /// (no false negatives; a false positive only means a look byte by byte).
    @inline(__always)
    static func mayNeedEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoteZero = (quote &- ones) & ~quote & highs
        let backslashZero = (backslash &- ones) & ~backslash & highs
        return (control | quoteZero | backslashZero) != 0
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0x0F))
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
