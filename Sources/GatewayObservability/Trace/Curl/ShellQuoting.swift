import GatewayCore

/// Quoting for POSIX `sh` (and bash/zsh, interactive or not).
///
/// Single quotes are the only context where no character is special, so every
/// literal is single-quoted, with `'` written as `'\''`. A word that must expand
/// a variable (`${GITHUB_TOKEN}`) is double-quoted, escaping `\`, `"`, `$` and
/// backtick in its literal parts; `!` (bash history expansion in interactive
/// shells) is closed out of the double quotes and single-quoted instead.
///
/// Characters unsafe on a terminal (``TerminalSafety``: controls, C1, bidi
/// overrides; tab and newline excepted, they are harmless between quotes)
/// are never written as they are: each run of them is a command substitution
/// printing its UTF-8 bytes in octal, `"$(printf '\342\200\256')"`, which
/// every POSIX shell reads back as the same bytes (``printfSubstitution(_:)``).
public enum ShellQuoting {
    /// One piece of a shell word.
    public enum Part: Sendable, Equatable {
        /// Taken literally.
        case literal(String)
        /// `${NAME}`: expanded by the shell (NAME is `[A-Za-z_][A-Za-z0-9_]*`).
        case variable(String)
    }

    /// `'...'` with each `'` as `'\''` and each run of characters unsafe on a
    /// terminal as `'"$(printf '...')"'`. Safe for every byte except NUL (which
    /// no shell word can hold). Runs between quotes are copied whole (`'` and
    /// the first bytes of unsafe characters are recognised by byte, so the
    /// text is cut at bytes; scalar by scalar was a trace writer hot spot).
    public static func singleQuoted(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 2)
        appendSingleQuoted(text[...], to: &out)
        return out
    }

    /// ``singleQuoted(_:)`` appended to `out`.
    static func appendSingleQuoted(_ text: Substring, to out: inout some ShellText) {
        out.write("'")
        appendSingleQuotedContent(text, to: &out)
        out.write("'")
    }

    /// What goes between the single quotes for `text` (each `'` as `'\\''`,
    /// unsafe runs as `'"$(printf '...')"'`), appended to `out`: quoting a
    /// concatenation is concatenating the quoted parts.
    static func appendSingleQuotedContent(_ text: Substring, to out: inout some ShellText) {
        // Nearly every text has neither: one pass over its bytes, one write.
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes in
            !bytes.contains { $0 == UInt8(ascii: "'") || TerminalSafety.mayStartUnsafe($0) }
        }
        if plain == true {
            out.write(text)
            return
        }
        let utf8 = text.utf8
        var runStart = utf8.startIndex
        var index = runStart
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "'") {
                out.write(text[runStart..<index])
                out.write("'\\''")
                index = utf8.index(after: index)
                runStart = index
            } else if TerminalSafety.mayStartUnsafe(byte), let end = unsafeRunEnd(text, from: index) {
                out.write(text[runStart..<index])
                out.write("'\"")
                out.write(printfSubstitution(text[index..<end]))
                out.write("\"'")
                index = end
                runStart = end
            } else {
                index = utf8.index(after: index)
            }
        }
        out.write(text[runStart...])
    }

    /// A word made of literal and variable parts. Literal-only words are
    /// single-quoted; otherwise literals sit in double quotes (escaped) next to
    /// `"${NAME}"` expansions, and any `!` is single-quoted outside them.
    public static func word(_ parts: [Part]) -> String {
        var out = ""
        appendWord(parts, to: &out)
        return out
    }

    /// ``word(_:)`` appended to `out`. Literal-only words are quoted part by
    /// part (quoting a concatenation is concatenating the quoted parts); a
    /// word with variables is a ``DoubleQuotedWord``.
    static func appendWord(_ parts: [Part], to out: inout some ShellText) {
        guard parts.contains(where: { if case .variable = $0 { true } else { false } }) else {
            out.write("'")
            for case .literal(let text) in parts { appendSingleQuotedContent(text[...], to: &out) }
            out.write("'")
            return
        }
        var word = DoubleQuotedWord()
        for part in parts { word.append(part, to: &out) }
        word.finish(&out)
    }

    /// A word with variables, written part by part: literals in double quotes
    /// (escaped) next to `"${NAME}"` expansions, any `!` single-quoted outside
    /// them, runs of unsafe characters as `$(printf '...')` inside them.
    /// Literals are copied in runs between the bytes double quotes make
    /// special (all ASCII, or the first byte of an unsafe character, so a run
    /// is whole characters).
    struct DoubleQuotedWord {
        private var inDouble = false

        mutating func append(_ part: Part, to out: inout some ShellText) {
            switch part {
            case .variable(let name):
                open(&out)
                out.write("${")
                out.write(sanitizedVariableName(name))
                out.write("}")
            case .literal(let text):
                append(literal: text, to: &out)
            }
        }

        mutating func append(literal text: String, to out: inout some ShellText) {
            let utf8 = text.utf8
            var runStart = utf8.startIndex
            var index = runStart
            while index != utf8.endIndex {
                let escaped: String?
                var next = utf8.index(after: index)
                switch utf8[index] {
                case UInt8(ascii: "!"): escaped = nil
                case UInt8(ascii: "\\"): escaped = "\\\\"
                case UInt8(ascii: "\""): escaped = "\\\""
                case UInt8(ascii: "$"): escaped = "\\$"
                case UInt8(ascii: "`"): escaped = "\\`"
                case let byte where TerminalSafety.mayStartUnsafe(byte):
                    // A run of unsafe characters: printed by a substitution, inside the double quotes.
                    guard let end = unsafeRunEnd(text[...], from: index) else {
                        index = next
                        continue
                    }
                    escaped = printfSubstitution(text[index..<end])
                    next = end
                default:
                    index = next
                    continue
                }
                if runStart != index {
                    open(&out)
                    out.write(text[runStart..<index])
                }
                if let escaped {
                    open(&out)
                    out.write(escaped)
                } else {
                    close(&out)
                    out.write("'!'")
                }
                index = next
                runStart = index
            }
            if runStart != utf8.endIndex {
                open(&out)
                out.write(text[runStart...])
            }
        }

        /// Closes the double quotes, if open: the word is complete.
        mutating func finish(_ out: inout some ShellText) { close(&out) }

        private mutating func open(_ out: inout some ShellText) {
            if !inDouble {
                out.write("\"")
                inDouble = true
            }
        }

        private mutating func close(_ out: inout some ShellText) {
            if inDouble {
                out.write("\"")
                inDouble = false
            }
        }
    }

    /// `NAME` made a valid shell variable name: other characters become `_`,
    /// a leading digit gets a `_` prefix.
    public static func sanitizedVariableName(_ name: String) -> String {
        // Names are nearly always valid already (they were made by this function): no new string.
        if let first = name.utf8.first, !(first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")),
            name.utf8.allSatisfy(isVariableByte)
        {
            return name
        }
        var out = ""
        for ch in name.unicodeScalars {
            let ok = (ch >= "A" && ch <= "Z") || (ch >= "a" && ch <= "z") || (ch >= "0" && ch <= "9") || ch == "_"
            out.unicodeScalars.append(ok ? ch : "_")
        }
        if out.isEmpty { return "_" }
        if let first = out.unicodeScalars.first, first >= "0" && first <= "9" { out = "_" + out }
        return out
    }

    private static func isVariableByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    /// Whether `bytes` can be written inline in single quotes and pasted into a
    /// terminal unharmed, as they are: valid UTF-8 with nothing
    /// ``TerminalSafety`` calls unsafe but newline and tab (a body with other
    /// controls, C1 or bidi characters goes to a file).
    public static func isInlineSafe(_ bytes: some Collection<UInt8>) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return !TerminalSafety.containsUnsafe(text, allowing: isHarmlessInQuotes)
    }
}

extension ShellQuoting {
    /// The parts as one text, each variable as `${NAME}` (the name as a shell
    /// word spells it): how a curl line shows them once unquoted, and how the
    /// HAR export shows redacted values.
    public static func template(_ parts: [Part]) -> String {
        parts.map { part in
            switch part {
            case .literal(let text): text
            case .variable(let name): "${\(sanitizedVariableName(name))}"
            }
        }.joined()
    }
}
