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

    mutating func write(_ text: Substring) {
        if text.utf8.withContiguousStorageIfAvailable({ append(escaping: $0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { append(escaping: $0) }
        }
    }

    mutating func write(_ text: String) {
        // Native and small strings (all the writer makes) without a copy.
        if text.utf8.withContiguousStorageIfAvailable({ append(escaping: $0) }) == nil {
            Array(text.utf8).withUnsafeBufferPointer { append(escaping: $0) }
        }
    }

    /// Runs of bytes that need no escape (nearly all of them) are copied at once.
    mutating func append(escaping utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for index in 0..<utf8.count {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
            escape(byte)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
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
