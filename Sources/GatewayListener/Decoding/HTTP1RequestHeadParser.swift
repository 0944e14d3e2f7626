import GatewayCore
import NIOHTTP1

/// Parses one client request head (request line and fields, CRLFCRLF
/// included) in one scan: the listener's own HTTP/1 parsing, in place of
/// NIOHTTP1's `HTTPRequestDecoder` and llhttp. As strict as llhttp
/// is by default where a lenient parser would let a request be read two ways
/// (RFC 9112 §2.2, §3, §5): bare LF or CR line ends, obs-fold, whitespace
/// before a colon, control bytes in the target or a value are refused.
enum HTTP1RequestHeadParser {
    /// The most fields one head may have.
    static let maxFields = 256

    /// `raw` is the whole head, ending in CRLFCRLF (leading empty lines already
    /// skipped). Up to ``FieldLines/maxCount`` fields are kept as bytes; a head
    /// with more (rare, and at most ``maxFields``) has its fields made into strings.
    static func parse(_ raw: UnsafeRawBufferPointer) throws(GatewayError) -> ClientRequestHead {
        guard let lineEnd = HTTP1HeadLines.lineEnd(in: raw, from: 0) else { throw malformed("request line") }
        let (method, uri, version) = try requestLine(raw, upTo: lineEnd)
        let fieldsStart = lineEnd + 2
        // The LFs after the request line: one per field line, and the head's empty last line.
        let count = HTTP1HeadLines.lineCount(in: raw, from: fieldsStart) - 1
        guard count <= maxFields else {
            throw GatewayError(.headTooLarge, "more than \(maxFields) header fields")
        }
        let headers: RequestFields
        if count <= FieldLines.maxCount {
            // The head ends in CRLFCRLF: no line end here is a bare LF or CR.
            do {
                headers = RequestFields(lines: try FieldLines(parsing: raw, from: fieldsStart, to: raw.count - 2, count: count))
            } catch {
                throw malformedField()
            }
        } else {
            headers = try RequestFields(strings: raw, from: fieldsStart)
        }
        return ClientRequestHead(version: version, method: method, uri: uri, headers: headers)
    }

    /// `METHOD SP request-target SP HTTP/1.x`.
    private static func requestLine(
        _ raw: UnsafeRawBufferPointer, upTo end: Int
    ) throws(GatewayError) -> (HTTPMethod, String, HTTPVersion) {
        var i = 0
        while i < end, raw[i] != UInt8(ascii: " ") {
            guard HTTPFieldBytes.isTokenByte(raw[i]) else { throw GatewayError(.badRequest, "invalid character in the request method") }
            i += 1
        }
        guard i > 0, i < end else { throw malformed("request line") }
        let method = Self.method(UnsafeRawBufferPointer(rebasing: raw[0..<i]))
        let targetStart = i + 1
        i = targetStart
        while i < end, raw[i] != UInt8(ascii: " ") {
            // No control bytes, no DEL; bytes above 0x7F pass (the target parser decides).
            guard raw[i] > 0x20, raw[i] != 0x7F else { throw GatewayError(.badRequest, "invalid character in the request target") }
            i += 1
        }
        guard i > targetStart, i < end else { throw malformed("request line") }
        let uri = HTTP1HeadLines.text(raw, targetStart..<i)
        let v = i + 1
        guard end - v == 8, raw[v] == UInt8(ascii: "H"), raw[v + 1] == UInt8(ascii: "T"), raw[v + 2] == UInt8(ascii: "T"),
              raw[v + 3] == UInt8(ascii: "P"), raw[v + 4] == UInt8(ascii: "/"), raw[v + 6] == UInt8(ascii: "."),
              raw[v + 5] >= UInt8(ascii: "0"), raw[v + 5] <= UInt8(ascii: "9"),
              raw[v + 7] >= UInt8(ascii: "0"), raw[v + 7] <= UInt8(ascii: "9")
        else { throw malformed("HTTP version") }
        guard raw[v + 5] == UInt8(ascii: "1"), raw[v + 7] <= UInt8(ascii: "1") else {
            throw GatewayError(.badRequest, "unsupported HTTP version: the gateway speaks HTTP/1.1 and HTTP/1.0")
        }
        return (method, uri, raw[v + 7] == UInt8(ascii: "1") ? .http1_1 : .http1_0)
    }

    /// The common methods compared as bytes; any other token is kept as it came.
    static func method(_ raw: UnsafeRawBufferPointer) -> HTTPMethod {
        switch raw.count {
        case 3:
            if HTTP1HeadLines.equals(raw, "GET" as StaticString) { return .GET }
            if HTTP1HeadLines.equals(raw, "PUT" as StaticString) { return .PUT }
        case 4:
            if HTTP1HeadLines.equals(raw, "POST" as StaticString) { return .POST }
            if HTTP1HeadLines.equals(raw, "HEAD" as StaticString) { return .HEAD }
        case 5:
            if HTTP1HeadLines.equals(raw, "PATCH" as StaticString) { return .PATCH }
        case 6:
            if HTTP1HeadLines.equals(raw, "DELETE" as StaticString) { return .DELETE }
        case 7:
            if HTTP1HeadLines.equals(raw, "CONNECT" as StaticString) { return .CONNECT }
            if HTTP1HeadLines.equals(raw, "OPTIONS" as StaticString) { return .OPTIONS }
        default:
            break
        }
        return HTTPMethod(rawValue: String(decoding: raw, as: UTF8.self))
    }

    static func malformedField() -> GatewayError {
        GatewayError(.badRequest, "malformed header field (a name that is no token, folding, whitespace before the colon, or a control character)")
    }

    private static func malformed(_ part: String) -> GatewayError {
        GatewayError(.badRequest, "malformed request: invalid \(part)")
    }
}

extension RequestFields {
    /// The fields from `start` to the head's end, each made into strings: for
    /// a head with more lines than ``FieldLines/maxCount``.
    fileprivate init(strings raw: UnsafeRawBufferPointer, from start: Int) throws(GatewayError) {
        self.init()
        var lineStart = start
        while true {
            guard let end = HTTP1HeadLines.lineEnd(in: raw, from: lineStart) else { throw HTTP1RequestHeadParser.malformedField() }
            if end == lineStart { break }
            guard let field = HTTP1HeadLines.field(raw, from: lineStart, to: end) else { throw HTTP1RequestHeadParser.malformedField() }
            add(name: field.name, value: field.value)
            lineStart = end + 2
        }
    }
}
