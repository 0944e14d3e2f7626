import GatewayCore
import GatewayObservability

/// Every quoted word, and every word of a curl line, reads back in a POSIX
/// shell as exactly what was quoted: the literal text, and `${NAME}` where a
/// variable was meant; nothing else expands, and no word runs into the next.
/// And none holds a character unsafe on a terminal as it is (only tab and
/// newline, between quotes): those are written as `$(printf '\ooo')`.
///
/// Input: fields separated by NUL (method, URL, headers `Name: value`..., and a
/// body when there are four fields or more); in a field, byte 0x01 switches
/// between literal text and a variable name.
enum ShellQuotingInvariants {
    typealias Part = ShellQuoting.Part

    static func check(_ input: [UInt8]) throws(InvariantViolation) {
        let fields = input.split(separator: 0, omittingEmptySubsequences: false).map(Array.init)
        let partsOfFields = fields.map(parts)
        for (field, parts) in zip(fields, partsOfFields) {
            let literal = String(decoding: field, as: UTF8.self)
            try expectWord(ShellQuoting.singleQuoted(literal), reads: [.literal(literal)])
            try expectWord(ShellQuoting.word(parts), reads: parts)
        }
        try checkCurl(fields: fields, parts: partsOfFields)
    }

    /// Literal and variable parts of a field.
    static func parts(_ field: [UInt8]) -> [Part] {
        field.split(separator: 1, omittingEmptySubsequences: false).enumerated().map { index, piece in
            let text = String(decoding: piece, as: UTF8.self)
            return index % 2 == 0 ? .literal(text) : .variable(text)
        }
    }

    /// What a shell should read for `parts`: variable names as the quoting writes them.
    static func expected(_ parts: [Part]) -> [Part] {
        ShellWordReader.normalized(parts.map { part in
            if case .variable(let name) = part { return .variable(ShellQuoting.sanitizedVariableName(name)) }
            return part
        })
    }

    /// Fails when `text` shows a character unsafe on a terminal as it is.
    static func expectTerminalSafe(_ text: String) throws(InvariantViolation) {
        let unsafe = TerminalSafety.containsUnsafe(text) { $0 == "\n" || $0 == "\t" }
        try InvariantViolation.require(!unsafe, .shellQuoting, "\(text.debugDescription) shows a control or bidi character as it is")
    }

    static func expectWord(_ quoted: String, reads parts: [Part]) throws(InvariantViolation) {
        try expectTerminalSafe(quoted)
        let want = expected(parts)
        do {
            let got = try ShellWordReader.word(quoted)
            try InvariantViolation.require(got == want, .shellQuoting, "\(quoted.debugDescription) reads as \(got), not \(want)")
        } catch let error as ShellWordReader.Unsafe {
            throw InvariantViolation(.shellQuoting, "\(quoted.debugDescription) is not one safe word: \(error.reason)")
        } catch let error as InvariantViolation {
            throw error
        } catch {
            throw InvariantViolation(.shellQuoting, "\(error)")
        }
    }

    static func checkCurl(fields: [[UInt8]], parts: [[Part]]) throws(InvariantViolation) {
        let method = fields.first.map { String(decoding: $0, as: UTF8.self) } ?? "GET"
        let url = parts.count > 1 ? parts[1] : [.literal("http://h/")]
        let headerFields = fields.count > 2 ? Array(fields[2..<(fields.count >= 4 ? fields.count - 1 : fields.count)]) : []
        let headers = headerFields.map(header)
        let bodyBytes = fields.count >= 4 ? fields[fields.count - 1] : nil
        let body: CurlCommand.Body = bodyBytes.map { bytes in
            CurlCommand.inlineBody(bytes).map(CurlCommand.Body.inline) ?? .file("/tmp/body \(bytes.count).bin")
        } ?? .none
        let command = CurlCommand(method: method, url: url, headers: headers, body: body, proxy: method.isEmpty ? nil : "http://127.0.0.1:8080")
        let arguments = command.arguments
        let line = command.line
        try expectTerminalSafe(line)
        let words: [[Part]]
        do {
            words = try ShellWordReader.words(line)
        } catch {
            throw InvariantViolation(.shellQuoting, "curl line is unsafe (\(error.reason)): \(line.debugDescription)")
        }
        try InvariantViolation.require(words.count == arguments.count, .shellQuoting, "curl line has \(words.count) words for \(arguments.count) arguments: \(line.debugDescription)")
        try InvariantViolation.require(words.last == expected(url), .shellQuoting, "curl URL reads as \(words.last ?? []): \(line.debugDescription)")
        // The word after each bare `-H` flag (by argument: a method `-H` is quoted `'-H'`).
        func word(after flag: String) -> [[Part]] {
            arguments.indices.dropLast().filter { arguments[$0] == flag }.map { words[$0 + 1] }
        }
        let headerWords = word(after: "-H")
        for (header, word) in zip(headers, headerWords) {
            let isEmpty = expected(header.value).isEmpty
            let want = isEmpty ? [Part.literal("\(header.name);")] : [.literal("\(header.name): ")] + header.value
            try InvariantViolation.require(word == expected(want), .shellQuoting, "header \(header.name.debugDescription) reads as \(word): \(line.debugDescription)")
        }
        if case .inline(let text) = body {
            let data = word(after: "--data-binary").first
            try InvariantViolation.require(data == expected([.literal(text)]), .shellQuoting, "body reads as \(data ?? []): \(line.debugDescription)")
        }
    }

    /// `Name: value parts`: the name up to the first colon.
    static func header(_ field: [UInt8]) -> CurlCommand.Header {
        guard let colon = field.firstIndex(of: UInt8(ascii: ":")) else {
            return CurlCommand.Header(name: String(decoding: field, as: UTF8.self), value: "")
        }
        var value = Array(field[(colon + 1)...])
        if value.first == UInt8(ascii: " ") { value.removeFirst() }
        return CurlCommand.Header(name: String(decoding: field[..<colon], as: UTF8.self), value: parts(value))
    }
}
