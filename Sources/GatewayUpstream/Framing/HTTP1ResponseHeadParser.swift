import GatewayCore
import NIOCore
import NIOHTTP1

/// Parses one HTTP/1 response head (status line and fields, CRLFCRLF included)
/// and decides how its body is framed. Strict where a lenient parser would let
/// a response be read two ways (RFC 9112 §5, §6.3, §11.1).
enum HTTP1ResponseHeadParser {
    enum BodyFraming: Equatable {
        case length(Int)
        case chunked
        case untilClose
    }

    /// A parsed head and what the connection needs to know of it, found in the
    /// one scan of its fields, so that nobody scans them again.
    struct Parsed {
        /// The end-to-end fields only: hop-by-hop ones (RFC 9110 §7.6.1) and
        /// those `Connection` names are not kept, as a proxy must not forward them.
        var head: HTTPResponseHead
        var framing: BodyFraming
        /// `Content-Length`, when there is no `Transfer-Encoding`.
        var declaredLength: Int?
        /// HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`.
        var keepAlive: Bool
    }

    /// `raw` is the whole head, ending in CRLFCRLF.
    static func parse(_ raw: UnsafeRawBufferPointer) throws(HTTP1FramingError) -> Parsed {
        guard let statusEnd = HTTP1HeadLines.lineEnd(in: raw, from: 0) else { throw .malformedStatusLine }
        let (version, status, reason) = try statusLine(raw, upTo: statusEnd)
        var lineStart = statusEnd + 2

        // One array sized for every line (and the `Via` the listener adds): grown
        // one field at a time it was reallocated three or four times per response.
        // Made `HTTPHeaders` once complete: its `add` checks every name again.
        var fields: [(String, String)] = []
        fields.reserveCapacity(HTTP1HeadLines.lineCount(in: raw, from: lineStart) + 1)
        var contentLength: Int?
        var transferEncoding: String?  // the last field's value; its last coding decides
        var hasTransferEncoding = false
        var connection = ConnectionOptions()
        while true {
            // The head ends in CRLFCRLF: no line end here is a bare LF or CR.
            guard let end = HTTP1HeadLines.lineEnd(in: raw, from: lineStart) else { throw .malformedHeaderLine }
            if end == lineStart { break }
            guard let (name, value) = HTTP1HeadLines.field(raw, from: lineStart, to: end) else { throw .malformedHeaderLine }
            lineStart = end + 2
            if HopByHopHeaders.equalsIgnoringCase(name, "content-length") {
                guard mergeContentLength(value, into: &contentLength) else { throw .invalidContentLength }
            } else if HopByHopHeaders.isAlwaysHopByHop(name) {
                if HopByHopHeaders.equalsIgnoringCase(name, "transfer-encoding") {
                    hasTransferEncoding = true
                    transferEncoding = value
                } else if HopByHopHeaders.equalsIgnoringCase(name, "connection") {
                    connection.add(value)
                }
                continue
            }
            fields.append((name, value))
        }
        var headers = HTTPHeaders(fields)
        for name in connection.named { headers.remove(name: name) }
        let head = HTTPResponseHead(version: version, status: HTTPResponseStatus(statusCode: status, reasonPhrase: reason), headers: headers)
        let keepAlive = version.minor >= 1 ? !connection.close : connection.keepAlive && !connection.close
        if hasTransferEncoding {
            guard contentLength == nil else { throw .contentLengthWithTransferEncoding }
            let framing: BodyFraming = lastCodingIsChunked(transferEncoding ?? "") ? .chunked : .untilClose
            return Parsed(head: head, framing: framing, declaredLength: nil, keepAlive: keepAlive)
        }
        if let contentLength { return Parsed(head: head, framing: .length(contentLength), declaredLength: contentLength, keepAlive: keepAlive) }
        return Parsed(head: head, framing: .untilClose, declaredLength: nil, keepAlive: keepAlive)
    }

    /// The options of the `Connection` fields: `close`, `keep-alive`, and the
    /// names of other hop-by-hop fields (rare: kept in an array only then).
    struct ConnectionOptions {
        var close = false
        var keepAlive = false
        var named: [String] = []

        /// Adds one field's comma-separated tokens.
        mutating func add(_ value: String) {
            HopByHopHeaders.forEachToken(in: value) { token in
                if HopByHopHeaders.equalsIgnoringCase("close", token) {
                    close = true
                } else if HopByHopHeaders.equalsIgnoringCase("keep-alive", token) {
                    keepAlive = true
                } else {
                    named.append(String(token))
                }
            }
        }
    }

    /// `HTTP/1.x SSS[ reason]`.
    private static func statusLine(_ raw: UnsafeRawBufferPointer, upTo end: Int) throws(HTTP1FramingError) -> (HTTPVersion, Int, String) {
        // "HTTP/1." compared in place: no array per response.
        guard end >= 12, raw[0] == UInt8(ascii: "H"), raw[1] == UInt8(ascii: "T"), raw[2] == UInt8(ascii: "T"), raw[3] == UInt8(ascii: "P"),
              raw[4] == UInt8(ascii: "/"), raw[5] == UInt8(ascii: "1"), raw[6] == UInt8(ascii: "."),
              raw[7] == UInt8(ascii: "0") || raw[7] == UInt8(ascii: "1"),
              raw[8] == UInt8(ascii: " ") else { throw .malformedStatusLine }
        var code = 0
        for i in 9..<12 {
            guard raw[i] >= UInt8(ascii: "0"), raw[i] <= UInt8(ascii: "9") else { throw .malformedStatusLine }
            code = code * 10 + Int(raw[i] - UInt8(ascii: "0"))
        }
        guard code >= 100, code <= 599, end == 12 || raw[12] == UInt8(ascii: " ") else { throw .malformedStatusLine }
        for i in 12..<end where !HTTPFieldBytes.isFieldValueByte(raw[i]) { throw .malformedStatusLine }
        let reason = end > 13 ? String(decoding: UnsafeRawBufferPointer(rebasing: raw[13..<end]), as: UTF8.self) : ""
        return (HTTPVersion(major: 1, minor: raw[7] == UInt8(ascii: "1") ? 1 : 0), code, reason)
    }

    private static func lastCodingIsChunked(_ value: String) -> Bool {
        var last: Substring = ""
        HopByHopHeaders.forEachToken(in: value) { last = $0 }
        return HopByHopHeaders.equalsIgnoringCase("chunked", last)
    }
}
