import Foundation
import GatewayCore

/// Request bodies: the values of secret fields replaced by `[REDACTED]`, by
/// the body's type, then every secret value scrubbed from the bytes. A body
/// whose fields cannot be found with certainty is not shown
/// (``unredactableBody``) rather than shown as it came.
extension TraceRedactor {
    /// What a trace shows instead of a body that could not be redacted.
    public static let unredactableBody = "<body not shown: could not be redacted>"

    /// The body with secret fields redacted; the same bytes when nothing matched.
    /// - NDJSON (`application/x-ndjson`, `jsonl`, `json-seq`): each line as JSON.
    /// - JSON (a `json` type, or a body whose first non-blank byte is `{` or
    ///   `[`): fields in `redact_json_fields`, at any depth. A body that does
    ///   not parse (bytes after the document, invalid UTF-8, cut short) is
    ///   scanned by bytes instead (``JSONFieldScan``).
    /// - `application/x-www-form-urlencoded`: parameters named in
    ///   `redact_json_fields` or `redact_query`, by bytes (any encoding).
    /// - `multipart/form-data`: parts with such a name (``MultipartRedaction``);
    ///   the others by their own type.
    public func body(_ bytes: [UInt8], contentType: String?) -> [UInt8] {
        guard enabled, !bytes.isEmpty else { return bytes }
        return scrub(bytes: redactedFields(bytes, contentType: contentType ?? "", nested: false))
    }

    /// ``body(_:contentType:)`` before the secret values are scrubbed;
    /// `nested` for a multipart part (which is not itself split again).
    func redactedFields(_ bytes: [UInt8], contentType: String, nested: Bool) -> [UInt8] {
        let type = contentType.lowercased()
        if Self.isLineDelimitedJSON(type) { return ndjson(bytes) }
        if type.contains("json") || Self.startsLikeJSON(bytes) { return json(bytes) }
        if type.contains("x-www-form-urlencoded") { return form(bytes) }
        if type.hasPrefix("multipart/form-data"), !nested {
            // The boundary is case-sensitive: read from the type as sent.
            guard let boundary = MultipartRedaction.boundary(in: contentType) else { return guarded(bytes) }
            let parts = MultipartRedaction(boundary: boundary, names: formFieldNames) { content, partType in
                self.redactedFields(content, contentType: partType ?? "", nested: true)
            }
            return parts.redacted(bytes) ?? guarded(bytes)
        }
        return bytes
    }

    /// JSON: parsed and written again when a field was redacted; scanned by
    /// bytes when it does not parse.
    private func json(_ bytes: [UInt8]) -> [UInt8] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            return JSONFieldScan(fields: fieldNames).redacted(bytes) ?? Array(Self.unredactableBody.utf8)
        }
        var changed = false
        let redacted = redactJSON(object, changed: &changed)
        guard changed else { return bytes }
        guard let data = try? JSONSerialization.data(withJSONObject: redacted, options: [.fragmentsAllowed, .withoutEscapingSlashes]) else {
            return Array(Self.unredactableBody.utf8)
        }
        return Array(data)
    }

    private func redactJSON(_ value: Any, changed: inout Bool) -> Any {
        if let dict = value as? [String: Any] {
            var out: [String: Any] = [:]
            for (key, inner) in dict {
                if fieldNames.contains(key.lowercased()) {
                    out[key] = Self.bodyPlaceholder
                    changed = true
                } else {
                    out[key] = redactJSON(inner, changed: &changed)
                }
            }
            return out
        }
        if let array = value as? [Any] { return array.map { redactJSON($0, changed: &changed) } }
        return value
    }

    /// One JSON document per line (a `\r` before the `\n` kept); blank lines as they are.
    private func ndjson(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        for (index, line) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            if index > 0 { out.append(UInt8(ascii: "\n")) }
            let carriageReturn = line.last == UInt8(ascii: "\r")
            let content = Array(carriageReturn ? line.dropLast() : line)
            if content.allSatisfy(JSONFieldScan.isWhitespace) {
                out.append(contentsOf: line)
                continue
            }
            out.append(contentsOf: json(content))
            if carriageReturn { out.append(UInt8(ascii: "\r")) }
        }
        return out
    }

    /// `name=value&...` by bytes: a pair whose name (`+` a space,
    /// percent-decoded, lowercased) is redacted keeps `name=`, its value
    /// becomes `[REDACTED]`. Bytes that are no UTF-8 stay as they are.
    private func form(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var changed = false
        for (index, pair) in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false).enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")), formFieldNames.contains(Self.formName(pair[..<equals])) {
                out.append(contentsOf: pair[...equals])
                out.append(contentsOf: Self.bodyPlaceholder.utf8)
                changed = true
            } else {
                out.append(contentsOf: pair)
            }
        }
        return changed ? out : bytes
    }

    /// A form parameter's name as the redaction lists hold it.
    static func formName(_ bytes: ArraySlice<UInt8>) -> String {
        PercentEncoding.decode(Substring(String(decoding: bytes, as: UTF8.self)), plusIsSpace: true).lowercased()
    }

    /// A body of a type with secret fields whose structure could not be read:
    /// as it is when no redacted name occurs in it at all (in any case), else not shown.
    private func guarded(_ bytes: [UInt8]) -> [UInt8] {
        let names = formFieldNames.map { Array($0.utf8) }
        return JSONFieldScan.containsAny(of: names, in: bytes[...]) ? Array(Self.unredactableBody.utf8) : bytes
    }

    static func isLineDelimitedJSON(_ type: String) -> Bool {
        type.contains("ndjson") || type.contains("jsonl") || type.contains("json-seq")
    }

    /// Whether the first byte that is not JSON whitespace opens an object or an array.
    static func startsLikeJSON(_ bytes: [UInt8]) -> Bool {
        guard let first = bytes.first(where: { !JSONFieldScan.isWhitespace($0) }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }
}
