/// Redacts a `multipart/form-data` body part by part (RFC 7578): a part whose
/// `Content-Disposition` name is one of `names` (lowercased) has its content
/// replaced by `[REDACTED]`; the content of every other part goes through
/// `redactPart` with the part's own `Content-Type` (a JSON part has its
/// fields redacted). Delimiters, part headers, preamble and epilogue are
/// copied as they are. Lines may end in CRLF or a bare LF; a body cut short
/// ends its last part at its end.
struct MultipartRedaction {
    let boundary: [UInt8]
    let names: Set<String>
    let redactPart: (_ content: [UInt8], _ contentType: String?) -> [UInt8]

    init(boundary: String, names: Set<String>, redactPart: @escaping (_ content: [UInt8], _ contentType: String?) -> [UInt8]) {
        self.boundary = Array("--\(boundary)".utf8)
        self.names = names
        self.redactPart = redactPart
    }

    /// The `boundary` parameter of a `multipart/...` content type (quoted or not), as sent.
    static func boundary(in contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingBlanks().lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingBlanks()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            return value.isEmpty ? nil : String(value)
        }
        return nil
    }

    /// The redacted body (`bytes` themselves when no part changed), or nil
    /// when no delimiter line is found or a part has no header block.
    func redacted(_ bytes: [UInt8]) -> [UInt8]? {
        guard var delimiter = nextDelimiter(in: bytes, from: 0) else { return nil }
        var out = Array(bytes[..<delimiter])
        var changed = false
        while true {
            let afterBoundary = delimiter + boundary.count
            // `--boundary--`: the close delimiter; the epilogue follows.
            if bytes[afterBoundary...].starts(with: "--".utf8) { break }
            guard let lineEnd = bytes[afterBoundary...].firstIndex(of: UInt8(ascii: "\n")) else { break }
            let partStart = lineEnd + 1
            let next = nextDelimiter(in: bytes, from: partStart)
            // The line break before the next delimiter belongs to it.
            var partEnd = next ?? bytes.count
            if next != nil, partEnd > partStart, bytes[partEnd - 1] == UInt8(ascii: "\n") { partEnd -= 1 }
            if next != nil, partEnd > partStart, bytes[partEnd - 1] == UInt8(ascii: "\r") { partEnd -= 1 }
            guard let part = redactedPart(bytes[partStart..<partEnd]) else { return nil }
            out.append(contentsOf: bytes[delimiter..<partStart])
            out.append(contentsOf: part.bytes)
            changed = changed || part.changed
            guard let next else { return changed ? out : bytes }
            out.append(contentsOf: bytes[partEnd..<next])
            delimiter = next
        }
        out.append(contentsOf: bytes[delimiter...])
        return changed ? out : bytes
    }

    /// The offset of the next `--boundary` at the start of a line, at or after `start`.
    private func nextDelimiter(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + boundary.count <= bytes.count {
            if (index == 0 || bytes[index - 1] == UInt8(ascii: "\n")), bytes[index..<(index + boundary.count)].elementsEqual(boundary) {
                return index
            }
            index += 1
        }
        return nil
    }

    /// One part: its header block as it is, its content redacted; nil without a header block end.
    private func redactedPart(_ part: ArraySlice<UInt8>) -> (bytes: [UInt8], changed: Bool)? {
        guard let headerEnd = Self.headerEnd(part) else { return nil }
        let headers = String(decoding: part[..<headerEnd], as: UTF8.self)
        let content = Array(part[headerEnd...])
        var name: String?
        var contentType: String?
        for line in headers.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let field = line.split(separator: ":", maxSplits: 1)
            guard field.count == 2 else { continue }
            switch field[0].trimmingBlanks().lowercased() {
            case "content-disposition": name = Self.dispositionName(field[1])
            case "content-type": contentType = String(field[1].trimmingBlanks())
            default: break
            }
        }
        if let name, names.contains(name.lowercased()) {
            return (Array(part[..<headerEnd]) + Array(TraceRedactor.bodyPlaceholder.utf8), true)
        }
        let redacted = redactPart(content, contentType)
        guard redacted != content else { return (Array(part), false) }
        return (Array(part[..<headerEnd]) + redacted, true)
    }

    /// The index after the blank line that ends the part's headers (CRLF CRLF or LF LF).
    static func headerEnd(_ part: ArraySlice<UInt8>) -> Int? {
        var index = part.startIndex
        // No headers at all: the part starts with its blank line.
        if part.starts(with: "\r\n".utf8) { return index + 2 }
        if part.first == UInt8(ascii: "\n") { return index + 1 }
        while index < part.endIndex {
            if part[index...].starts(with: "\r\n\r\n".utf8) { return index + 4 }
            if part[index...].starts(with: "\n\n".utf8) { return index + 2 }
            index += 1
        }
        return nil
    }

    /// The `name` parameter of a `Content-Disposition` value (not `filename`), unquoted.
    static func dispositionName(_ value: Substring) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingBlanks().lowercased() == "name" else { continue }
            var text = pair[1].trimmingBlanks()
            if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
            return String(text)
        }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingBlanks() -> Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
