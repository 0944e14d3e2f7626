import GatewayObservability

/// Reads a command line the way a POSIX `sh` does, for the subset a correctly
/// quoted line may use: words split on unquoted blanks; `\x`; `'...'`; `"..."` with
/// `\` escaping only `$`, backtick, `"`, `\` and newline, `${NAME}`
/// expansions, and `$(printf '\ooo...')` substitutions of octal bytes (how
/// characters unsafe on a terminal are written), read as the UTF-8 text
/// `printf` prints; bare words only of characters no shell treats specially.
/// Anything else a shell would interpret (an unquoted `;`, any other `$(`, a
/// backtick, `!` inside double quotes, where interactive bash expands
/// history) is an error.
struct ShellWordReader {
    struct Unsafe: Error {
        var reason: String
    }

    /// The words of `line`, each as literal and variable parts (adjacent literals merged).
    static func words(_ line: String) throws(Unsafe) -> [[ShellQuoting.Part]] {
        var reader = ShellWordReader(scalars: Array(line.unicodeScalars))
        return try reader.readWords()
    }

    /// `text` read as exactly one word.
    static func word(_ text: String) throws(Unsafe) -> [ShellQuoting.Part] {
        let all = try words(text)
        guard all.count == 1 else { throw Unsafe(reason: "\(all.count) words, expected one") }
        return all[0]
    }

    /// `parts` with adjacent literals merged and empty literals dropped.
    static func normalized(_ parts: [ShellQuoting.Part]) -> [ShellQuoting.Part] {
        var out: [ShellQuoting.Part] = []
        for part in parts {
            if case .literal(let text) = part {
                if text.isEmpty { continue }
                if case .literal(let previous)? = out.last {
                    out[out.count - 1] = .literal(previous + text)
                    continue
                }
            }
            out.append(part)
        }
        return out
    }

    private var scalars: [Unicode.Scalar]
    private var index = 0
    private var current: [ShellQuoting.Part] = []
    private var inWord = false

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    private mutating func readWords() throws(Unsafe) -> [[ShellQuoting.Part]] {
        var words: [[ShellQuoting.Part]] = []
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case " ", "\t":
                if inWord { words.append(Self.normalized(current)) }
                current = []
                inWord = false
            case "'":
                inWord = true
                try readSingleQuoted()
            case "\"":
                inWord = true
                try readDoubleQuoted()
            case "\\":
                // Outside quotes a backslash quotes the next character (`'\''`); before a newline both vanish.
                guard index < scalars.count else { throw Unsafe(reason: "backslash at the end") }
                let next = scalars[index]
                index += 1
                if next != "\n" {
                    inWord = true
                    current.append(.literal(String(next)))
                }
            default:
                guard Self.isBare(scalar) else { throw Unsafe(reason: "unquoted \(scalar.escaped(asASCII: true))") }
                inWord = true
                current.append(.literal(String(scalar)))
            }
        }
        if inWord { words.append(Self.normalized(current)) }
        return words
    }

    private mutating func readSingleQuoted() throws(Unsafe) {
        var text = ""
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            if scalar == "'" {
                current.append(.literal(text))
                return
            }
            text.unicodeScalars.append(scalar)
        }
        throw Unsafe(reason: "unterminated single quote")
    }

    private mutating func readDoubleQuoted() throws(Unsafe) {
        var text = ""
        while index < scalars.count {
            let scalar = scalars[index]
            index += 1
            switch scalar {
            case "\"":
                current.append(.literal(text))
                return
            case "\\":
                guard index < scalars.count else { throw Unsafe(reason: "backslash at the end") }
                let next = scalars[index]
                if next == "$" || next == "`" || next == "\"" || next == "\\" {
                    text.unicodeScalars.append(next)
                    index += 1
                } else if next == "\n" {
                    index += 1  // a line continuation: both vanish
                } else {
                    text.unicodeScalars.append(scalar)
                }
            case "$" where index < scalars.count && scalars[index] == "(":
                text.unicodeScalars.append(contentsOf: try readPrintfSubstitution())
            case "$":
                current.append(.literal(text))
                text = ""
                current.append(.variable(try readBracedName()))
            case "`":
                throw Unsafe(reason: "command substitution in double quotes")
            case "!":
                throw Unsafe(reason: "! in double quotes (bash history expansion)")
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        throw Unsafe(reason: "unterminated double quote")
    }

    /// `(printf '\ooo...')` after a `$`: each `\` followed by one to three
    /// octal digits is a byte (as POSIX `printf` reads its format), nothing
    /// else may be in the format; the bytes must be UTF-8 and not end in a
    /// newline (which `$(...)` would drop). The characters they spell.
    private mutating func readPrintfSubstitution() throws(Unsafe) -> String.UnicodeScalarView {
        guard let (bytes, end) = ShellQuoting.printfBytes(scalars, from: index) else {
            throw Unsafe(reason: "$( other than $(printf '...') of octal bytes, or unterminated")
        }
        index = end
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.isEmpty, bytes.last != 0x0A else {
            throw Unsafe(reason: "printf bytes that are no UTF-8 text, or end in a newline")
        }
        return text.unicodeScalars
    }

    /// `{NAME}` after a `$`, NAME `[A-Za-z_][A-Za-z0-9_]*`.
    private mutating func readBracedName() throws(Unsafe) -> String {
        guard index < scalars.count, scalars[index] == "{" else { throw Unsafe(reason: "$ not followed by {NAME}") }
        index += 1
        var name = ""
        while index < scalars.count, scalars[index] != "}" {
            let scalar = scalars[index]
            let isLetter = (scalar >= "A" && scalar <= "Z") || (scalar >= "a" && scalar <= "z") || scalar == "_"
            guard isLetter || (!name.isEmpty && scalar >= "0" && scalar <= "9") else {
                throw Unsafe(reason: "invalid variable name character \(scalar.escaped(asASCII: true))")
            }
            name.unicodeScalars.append(scalar)
            index += 1
        }
        guard index < scalars.count, !name.isEmpty else { throw Unsafe(reason: "unterminated ${NAME}") }
        index += 1
        return name
    }

    /// Characters a shell takes literally outside quotes, anywhere in a word.
    private static func isBare(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            || "-_./:,+@%".unicodeScalars.contains(scalar)
    }
}
