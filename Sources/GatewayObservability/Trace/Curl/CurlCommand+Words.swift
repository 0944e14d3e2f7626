import GatewayCore

/// Where the words of a ``CurlCommand`` go. A word is written in place by a
/// closure, so the line forms quote every word straight into their text.
protocol CurlWords {
    associatedtype Text: ShellText
    /// Adds one word; `write` appends its (already quoted) text.
    mutating func word(_ write: (inout Text) -> Void)
}

/// The words as one line, separated by single spaces, into a `String` or
/// into a JSON string's bytes (``JSONStringText``).
struct CurlLine<Text: ShellText>: CurlWords {
    var text: Text
    private var empty = true

    init(into text: Text) {
        self.text = text
    }

    mutating func word(_ write: (inout Text) -> Void) {
        if !empty { text.write(" ") }
        empty = false
        write(&text)
    }
}

/// The words one by one (``CurlCommand/arguments``).
struct CurlWordList: CurlWords {
    var words: [String] = []

    mutating func word(_ write: (inout String) -> Void) {
        var word = ""
        write(&word)
        words.append(word)
    }
}

extension CurlCommand {
    /// Writes the command's words in order (see the type's documentation for the rules).
    func write(to words: inout some CurlWords) {
        words.word { $0.write("curl") }
        if let proxy {
            words.word { $0.write("-x") }
            words.word { ShellQuoting.appendSingleQuoted(proxy[...], to: &$0) }
        }
        let hasBody: Bool
        switch body {
        case .none: hasBody = false
        default: hasBody = true
        }
        if !hasBody && HopByHopHeaders.equalsIgnoringCase(method, "HEAD") {
            words.word { $0.write("--head") }
        } else if hasBody ? HopByHopHeaders.equalsIgnoringCase(method, "POST") : HopByHopHeaders.equalsIgnoringCase(method, "GET") {
            // curl infers it.
        } else {
            words.word { $0.write("-X") }
            words.word { ShellQuoting.appendSingleQuoted(method[...], to: &$0) }
        }
        words.word { $0.write("--http1.1") }
        words.word { $0.write("--globoff") }
        words.word { $0.write("--path-as-is") }
        for header in headers {
            words.word { $0.write("-H") }
            words.word { Self.appendHeaderWord(header, to: &$0) }
        }
        suppressMissing(Self.curlDefaults, in: &words)
        if hasBody { suppressMissing(Self.bodyDefaults, in: &words) }
        switch body {
        case .none:
            break
        case .inline(let text):
            words.word { $0.write("--data-binary") }
            words.word { ShellQuoting.appendSingleQuoted(text[...], to: &$0) }
        case .file(let path):
            words.word { $0.write("--data-binary") }
            words.word { ShellQuoting.appendSingleQuoted(("@" + path)[...], to: &$0) }
        case .notCaptured(let length):
            words.word { $0.write("--data-binary") }
            words.word { ShellQuoting.appendSingleQuoted("@<body not captured: \(length.map(String.init) ?? "unknown") bytes>"[...], to: &$0) }
        }
        for argument in extraArguments {
            words.word { $0.write(argument) }
        }
        words.word { ShellQuoting.appendWord(url, to: &$0) }
    }

    /// `-H 'Name:'` for each of `names` the request does not have (curl would add its own).
    private func suppressMissing(_ names: [String], in words: inout some CurlWords) {
        for name in names where !headers.contains(where: { HopByHopHeaders.equalsIgnoringCase($0.name, name) }) {
            words.word { $0.write("-H") }
            words.word { out in
                out.write("'")
                out.write(name)
                out.write(":'")
            }
        }
    }

    /// About the length of ``line``: its string is sized once.
    var estimatedLineBytes: Int {
        var length = 96 + (proxy?.utf8.count ?? 0) + method.utf8.count
        for header in headers { length += header.name.utf8.count + 12 + Self.valueBytes(header) }
        for part in url {
            switch part {
            case .literal(let text): length += text.utf8.count + 2
            case .variable(let name): length += name.utf8.count + 6
            }
        }
        for argument in extraArguments { length += argument.utf8.count + 1 }
        switch body {
        case .inline(let text): length += text.utf8.count + 20
        case .file(let path): length += path.utf8.count + 20
        case .none, .notCaptured: break
        }
        return length
    }

    private static func valueBytes(_ header: Header) -> Int {
        switch header.storage {
        case .literal(let text): return text.utf8.count
        case .parts(let parts):
            return parts.reduce(0) { sum, part in
                switch part {
                case .literal(let text): sum + text.utf8.count
                case .variable(let name): sum + name.utf8.count + 6
                }
            }
        }
    }

    /// The `-H` word of `header` as one string.
    static func headerWord(_ header: Header) -> String {
        var out = ""
        appendHeaderWord(header, to: &out)
        return out
    }

    /// The `-H` word of `header`: `'Name: value'` (`'Name;'` when empty). A value
    /// of literals only, the common case, is quoted in place; one with variables
    /// goes through ``ShellQuoting/word(_:)``.
    static func appendHeaderWord(_ header: Header, to out: inout some ShellText) {
        switch header.storage {
        case .literal(let text):
            appendLiteralHeaderWord(name: header.name, values: CollectionOfOne(text), isEmpty: text.isEmpty, to: &out)
        case .parts(let parts):
            var isEmpty = true
            for part in parts {
                guard case .literal(let text) = part else {
                    var word = ShellQuoting.DoubleQuotedWord()
                    word.append(literal: header.name, to: &out)
                    word.append(literal: ": ", to: &out)
                    for part in parts { word.append(part, to: &out) }
                    word.finish(&out)
                    return
                }
                if !text.isEmpty { isEmpty = false }
            }
            let literals = parts.lazy.map { part -> String in
                if case .literal(let text) = part { text } else { "" }
            }
            appendLiteralHeaderWord(name: header.name, values: literals, isEmpty: isEmpty, to: &out)
        }
    }

    private static func appendLiteralHeaderWord(name: String, values: some Sequence<String>, isEmpty: Bool, to out: inout some ShellText) {
        out.write("'")
        ShellQuoting.appendSingleQuotedContent(name[...], to: &out)
        if isEmpty {
            out.write(";")
        } else {
            out.write(": ")
            for value in values { ShellQuoting.appendSingleQuotedContent(value[...], to: &out) }
        }
        out.write("'")
    }
}
