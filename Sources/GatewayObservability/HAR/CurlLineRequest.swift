/// The request a trace record's curl line sends (as ``CurlCommand`` writes
/// them), read back: URL, headers in order, body. Shell variables stay as
/// `${NAME}` text, so redacted values read as their placeholders. This is
/// how the HAR export gets a record's request, from old records too.
public struct CurlLineRequest: Sendable, Equatable {
    public enum Body: Sendable, Equatable {
        case none
        case inline(String)
        /// `--data-binary @PATH`: the body file.
        case file(String)
        /// Streamed and too large to keep: its length when known.
        case notCaptured(Int?)
    }

    public var method: String?
    public var url: String
    public var headers: [TraceRecord.Header]
    public var body: Body

    /// Options of ``CurlCommand`` lines that take a value this reader skips.
    static let optionsWithValue: Set<String> = ["-x", "--proxy-user", "--user", "--cacert"]

    /// Nil when `line` is not a curl command line ``CurlCommand`` writes.
    public init?(line: String) {
        guard let words = Self.words(line), words.first == "curl", words.count >= 2 else { return nil }
        var method: String?
        var headers: [TraceRecord.Header] = []
        var body = Body.none
        // The URL is the last word; options (and their values) come before it.
        let last = words.count - 1
        var index = 1
        while index < last {
            let word = words[index]
            index += 1
            if word == "--head" { method = "HEAD" }
            guard word == "-X" || word == "-H" || word == "--data-binary" || Self.optionsWithValue.contains(word), index < last else { continue }
            let value = words[index]
            index += 1
            switch word {
            case "-X": method = value
            case "-H": if let header = Self.header(value) { headers.append(header) }
            case "--data-binary": body = Self.body(value)
            default: break
            }
        }
        self.method = method
        self.url = words[words.count - 1]
        self.headers = headers
        self.body = body
    }

    /// `Name: value`; `Name;` is an empty value; `Name:` (curl's "leave out
    /// your default") is no header.
    static func header(_ word: String) -> TraceRecord.Header? {
        if word.hasSuffix(";"), !word.contains(":") { return TraceRecord.Header(name: String(word.dropLast()), value: "") }
        guard let colon = word.firstIndex(of: ":") else { return nil }
        var value = word[word.index(after: colon)...]
        guard !value.isEmpty else { return nil }
        if value.first == " " { value = value.dropFirst() }
        return TraceRecord.Header(name: String(word[..<colon]), value: String(value))
    }

    static func body(_ word: String) -> Body {
        guard word.hasPrefix("@") else { return .inline(word) }
        let notCaptured = "@<body not captured: "
        if word.hasPrefix(notCaptured) {
            return .notCaptured(Int(word.dropFirst(notCaptured.count).prefix { $0.isNumber }))
        }
        return .file(String(word.dropFirst()))
    }

    /// The words of a POSIX shell line of single-quoted, double-quoted
    /// (`\`-escapes, `${NAME}` kept as text, `$(printf '\ooo...')` read as
    /// the characters it prints) and bare parts; nil on an unclosed quote.
    public static func words(_ line: String) -> [String]? {
        let scalars = Array(line.unicodeScalars)
        var words: [String] = []
        var current = ""
        var inWord = false
        var index = 0
        func advance() -> Unicode.Scalar? {
            guard index < scalars.count else { return nil }
            defer { index += 1 }
            return scalars[index]
        }
        while let ch = advance() {
            switch ch {
            case " ", "\t", "\n":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "'":
                inWord = true
                while true {
                    guard let next = advance() else { return nil }
                    if next == "'" { break }
                    current.unicodeScalars.append(next)
                }
            case "\"":
                inWord = true
                while true {
                    guard let next = advance() else { return nil }
                    if next == "\"" { break }
                    if next == "\\" {
                        guard let escaped = advance() else { return nil }
                        if !["\\", "\"", "$", "`", "\n"].contains(escaped) { current.unicodeScalars.append(next) }
                        if escaped != "\n" { current.unicodeScalars.append(escaped) }
                    } else if next == "$", let (text, end) = printfSubstitution(scalars, from: index) {
                        current.unicodeScalars.append(contentsOf: text.unicodeScalars)
                        index = end
                    } else {
                        current.unicodeScalars.append(next)
                    }
                }
            case "\\":
                inWord = true
                if let escaped = advance(), escaped != "\n" { current.unicodeScalars.append(escaped) }
            default:
                inWord = true
                current.unicodeScalars.append(ch)
            }
        }
        if inWord { words.append(current) }
        return words
    }

    /// `(printf '\ooo...')` at `start` (just after a `$`), as ``ShellQuoting``
    /// writes characters unsafe on a terminal: the text its octal bytes spell,
    /// and the index after the `)`; nil when something else is there.
    static func printfSubstitution(_ scalars: [Unicode.Scalar], from start: Int) -> (text: String, end: Int)? {
        guard let (bytes, end) = ShellQuoting.printfBytes(scalars, from: start) else { return nil }
        return (String(decoding: bytes, as: UTF8.self), end)
    }
}
