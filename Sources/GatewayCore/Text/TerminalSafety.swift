/// Which characters must not reach a terminal as they are, and a visible
/// escape for them. The one definition every terminal-bound output uses: the
/// curl lines' shell quoting (which escapes them so the shell still reads the
/// original bytes), `gateway trace list|show|curl`, and the info line per
/// exchange.
///
/// Unsafe: C0 controls (U+0000–U+001F), DEL (U+007F), C1 controls
/// (U+0080–U+009F: `\u{9B}` is a one-character CSI, `\u{9D}` an OSC), and
/// the bidirectional formatting characters (U+061C, U+200E, U+200F,
/// U+202A–U+202E, U+2066–U+2069), which reorder what a terminal shows
/// ("Trojan Source"). Callers decide whether tab and newline may pass.
public enum TerminalSafety {
    /// Whether `scalar` is a control or bidi formatting character (see the type's documentation).
    @inlinable
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    /// Whether `byte` can start the UTF-8 of an unsafe scalar: below 0x20, DEL,
    /// or the lead bytes 0xC2 (C1), 0xD8 (U+061C) and 0xE2 (U+200E…U+2069).
    /// A byte scan finds text that needs no escape without decoding it.
    @inlinable
    public static func mayStartUnsafe(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == 0x7F || byte == 0xC2 || byte == 0xD8 || byte == 0xE2
    }

    /// Whether `text` holds an unsafe scalar other than those `allowed` lets through.
    public static func containsUnsafe(_ text: some StringProtocol, allowing allowed: (Unicode.Scalar) -> Bool = { _ in false }) -> Bool {
        guard text.utf8.contains(where: mayStartUnsafe) else { return false }
        return text.unicodeScalars.contains { isUnsafe($0) && !allowed($0) }
    }

    /// How ``escaped(_:style:)`` writes an unsafe scalar.
    public enum Style: Sendable {
        /// `\u{202E}`, `\u{1B}`: for text people read (log lines, `trace list`).
        case swift
        /// `\u202e`, `\u001b`: for JSON text, where it reads back as the same
        /// string (every unsafe scalar is in the BMP). Tab, newline and carriage
        /// return stay as they are: in valid JSON they are only the whitespace
        /// between tokens (inside a string an encoder writes them as escapes),
        /// and outside strings there is only ASCII punctuation, so a whole
        /// document, pretty-printed or not, may be escaped at once.
        case json
    }

    /// `text` with every unsafe scalar written as a visible escape; `text`
    /// itself (no copy) when it has none. A backslash is not escaped: the
    /// result is for reading, not for decoding (but in `.json` style, where
    /// it is valid JSON for valid JSON).
    public static func escaped(_ text: String, style: Style = .swift) -> String {
        let json = style == .json
        let passes = { (scalar: Unicode.Scalar) -> Bool in json && isJSONWhitespace(scalar) }
        guard containsUnsafe(text, allowing: passes) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            guard isUnsafe(scalar), !passes(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch style {
            case .swift:
                out += "\\u{"
                out += String(scalar.value, radix: 16, uppercase: true)
                out += "}"
            case .json:
                let hex = String(scalar.value, radix: 16)
                out += "\\u"
                out += String(repeating: "0", count: 4 - hex.utf8.count)
                out += hex
            }
        }
        return out
    }

    /// Tab, newline, carriage return: JSON's whitespace between tokens (RFC 8259 §2).
    private static func isJSONWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar == "\n" || scalar == "\r"
    }
}
