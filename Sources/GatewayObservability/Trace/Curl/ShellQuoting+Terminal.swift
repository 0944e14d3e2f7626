import GatewayCore

/// Characters unsafe on a terminal in shell text: written as a command
/// substitution that prints their bytes, so a curl line is safe to show and
/// still replays the original bytes. POSIX `printf` reads `\ooo` (one to
/// three octal digits) in its format as one byte; `$(...)` keeps every byte
/// but trailing newlines, and a newline is never written this way (it is
/// harmless between quotes).
extension ShellQuoting {
    /// Whether `scalar`, unsafe on a terminal, may still stand as it is between
    /// quotes: tab and newline (a multi-line body, a header's tab).
    static func isHarmlessInQuotes(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\n" || scalar == "\t"
    }

    /// Whether `scalar` is written as a ``printfSubstitution(_:)``.
    static func needsSubstitution(_ scalar: Unicode.Scalar) -> Bool {
        TerminalSafety.isUnsafe(scalar) && !isHarmlessInQuotes(scalar)
    }

    /// The end of the run of characters needing a substitution that starts at
    /// `start` (a character boundary of `text`); nil when `start` starts none.
    static func unsafeRunEnd(_ text: Substring, from start: String.Index) -> String.Index? {
        let scalars = text.unicodeScalars
        var index = start
        while index != scalars.endIndex, needsSubstitution(scalars[index]) {
            index = scalars.index(after: index)
        }
        return index == start ? nil : index
    }

    /// `$(printf '\ooo...')` for the UTF-8 bytes of `run`: expands to exactly
    /// those bytes (none of them a newline) in any POSIX shell. Quote it in
    /// double quotes, as every caller does, so it is one word.
    static func printfSubstitution(_ run: Substring) -> String {
        var text = "$(printf '"
        text.reserveCapacity(14 + 4 * run.utf8.count)
        for byte in run.utf8 {
            text.unicodeScalars.append("\\")
            text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + (byte >> 6)))
            text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + ((byte >> 3) & 7)))
            text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + (byte & 7)))
        }
        text += "')"
        return text
    }

    /// Reads back what ``printfSubstitution(_:)`` writes: `(printf '\ooo...')`
    /// at `start` (just after a `$`), each `\` followed by one to three octal
    /// digits a byte, as POSIX `printf` reads its format, nothing else in it.
    /// The bytes and the index after the `)`; nil when something else is there.
    package static func printfBytes(_ scalars: [Unicode.Scalar], from start: Int) -> (bytes: [UInt8], end: Int)? {
        let opening = Array("(printf '".unicodeScalars)
        guard start + opening.count <= scalars.count, Array(scalars[start..<(start + opening.count)]) == opening else { return nil }
        var index = start + opening.count
        var bytes: [UInt8] = []
        while index < scalars.count, scalars[index] == "\\" {
            index += 1
            var value: UInt32 = 0
            var digits = 0
            while digits < 3, index < scalars.count, scalars[index] >= "0", scalars[index] <= "7" {
                value = value * 8 + (scalars[index].value - 0x30)
                digits += 1
                index += 1
            }
            guard digits > 0, value <= 0xFF else { return nil }
            bytes.append(UInt8(value))
        }
        guard index + 2 <= scalars.count, scalars[index] == "'", scalars[index + 1] == ")" else { return nil }
        return (bytes, index + 2)
    }

    /// `line`, a shell command line, with each run of unsafe characters
    /// written as a ``printfSubstitution(_:)`` where it stands: between single
    /// quotes as `'"$(...)"'`, between double quotes as `$(...)`, unquoted as
    /// `"$(...)"`. The shell reads the result as it read `line`. `line`
    /// itself when it has none: every line this version writes (the quoting
    /// substitutes as it goes); this is for lines in older trace files.
    public static func terminalSafeLine(_ line: String) -> String {
        guard TerminalSafety.containsUnsafe(line, allowing: isHarmlessInQuotes) else { return line }
        enum Quote { case none, single, double }
        let scalars = line.unicodeScalars
        var out = ""
        out.reserveCapacity(line.utf8.count + 32)
        var quote = Quote.none
        var index = scalars.startIndex
        while index != scalars.endIndex {
            let scalar = scalars[index]
            if let end = unsafeRunEnd(line[...], from: index) {
                let substitution = printfSubstitution(line[index..<end])
                switch quote {
                case .single: out += "'\"" + substitution + "\"'"
                case .double: out += substitution
                case .none: out += "\"" + substitution + "\""
                }
                index = end
                continue
            }
            out.unicodeScalars.append(scalar)
            index = scalars.index(after: index)
            switch (quote, scalar) {
            case (.none, "'"): quote = .single
            case (.none, "\""): quote = .double
            case (.single, "'"), (.double, "\""): quote = .none
            case (.none, "\\"), (.double, "\\"):
                // The next character is quoted by the backslash: copied as it
                // is, unless it needs a substitution, which the loop writes
                // next. Unquoted, the backslash only quoted it: it goes. In
                // double quotes it is a backslash of its own, and before the
                // substitution's `$` it must be written `\\`.
                guard index != scalars.endIndex else { break }
                let next = scalars[index]
                if needsSubstitution(next) {
                    out.unicodeScalars.removeLast()
                    if quote == .double { out += "\\\\" }
                } else {
                    out.unicodeScalars.append(next)
                    index = scalars.index(after: index)
                }
            default: break
            }
        }
        return out
    }
}
