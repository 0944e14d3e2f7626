import GatewayCore
import NIOCore
import NIOHTTP1

/// Parses one HTTP/1 response head (status line and fields, CRLFCRLF included)
/// and decides how its body is framed. Strict where a lenient parser would let
/// a response be read two ways (RFC 9112 §5, §6.3, §11.1), and where its body
/// would reach the client as something else: a `Transfer-Encoding` other than
/// `chunked` alone is refused (``isChunkedAlone(_:)``).
enum HTTP1ResponseHeadParser {
    enum BodyFraming: Equatable {
        case length(Int)
        case chunked
        case untilClose
    }

    /// A parsed head and what the connection needs to know of it, found in the
    /// one scan of its fields, so that nobody scans them again.
    struct Parsed {
        var status: HTTPResponseStatus
        /// The end-to-end fields only: hop-by-hop ones (RFC 9110 §7.6.1) and
        /// those `Connection` names are not passed on, as a proxy must not
        /// forward them. Kept as the upstream's bytes (``ResponseFields``).
        var fields: ResponseFields
        var framing: BodyFraming
        /// `Content-Length`, when there is no `Transfer-Encoding`.
        var declaredLength: Int?
        /// HTTP/1.1 without `Connection: close`, or HTTP/1.0 with `Connection: keep-alive`.
        var keepAlive: Bool
    }

    /// `head` is the whole head, ending in CRLFCRLF.
    static func parse(_ head: ByteBuffer) throws(HTTP1FramingError) -> Parsed {
        let result = head.withUnsafeReadableBytes { raw in Result { () throws(HTTP1FramingError) in try Self.scan(raw) } }
        let scan: Scan = try result.get()
        var fields: ResponseFields
        if let dropped = scan.dropped {
            let lines = head.getSlice(at: head.readerIndex + scan.lines.lowerBound, length: scan.lines.count)!
            fields = ResponseFields(lines: lines, dropped: dropped)
        } else {
            fields = ResponseFields(scan.headers)
        }
        if !scan.connection.named.isEmpty {
            // Rare: fields named in `Connection` are not passed on either.
            fields.drop(named: scan.connection.named)
        }
        let status = scan.status
        let connection = scan.connection
        let keepAlive = scan.minor >= 1 ? !connection.close : connection.keepAlive && !connection.close
        if let transferEncoding = scan.transferEncoding {
            guard scan.contentLength == nil else { throw .contentLengthWithTransferEncoding }
            // `Transfer-Encoding` is hop-by-hop: the client's head never carries the
            // upstream's. A body in another coding (`gzip`, `gzip, chunked`) would
            // reach the client as identity bytes, so it is refused, not passed on.
            guard isChunkedAlone(transferEncoding) else { throw .unsupportedTransferCoding }
            return Parsed(status: status, fields: fields, framing: .chunked, declaredLength: nil, keepAlive: keepAlive)
        }
        if let length = scan.contentLength {
            return Parsed(status: status, fields: fields, framing: .length(length), declaredLength: length, keepAlive: keepAlive)
        }
        return Parsed(status: status, fields: fields, framing: .untilClose, declaredLength: nil, keepAlive: keepAlive)
    }

    /// What the one scan of a head finds.
    private struct Scan {
        var minor = 1
        var status = HTTPResponseStatus.ok
        /// The field lines' offsets (each with its CRLF; not the head's empty last line).
        var lines = 0..<0
        /// Bit `i`: line `i` is hop-by-hop. Nil for a head of more than
        /// ``ResponseFields/maxLines`` lines: its fields are `headers` then.
        var dropped: UInt64? = 0
        var headers = HTTPHeaders()
        var contentLength: Int?
        /// Every `Transfer-Encoding` field's value, in order, joined with `, `:
        /// the codings of all of them apply (RFC 9110 §5.3).
        var transferEncoding: String?
        var connection = ConnectionOptions()
    }

    private static func scan(_ raw: UnsafeRawBufferPointer) throws(HTTP1FramingError) -> Scan {
        guard let statusEnd = HTTP1HeadLines.lineEnd(in: raw, from: 0) else { throw .malformedStatusLine }
        var scan = Scan()
        (scan.minor, scan.status) = try statusLine(raw, upTo: statusEnd)
        var lineStart = statusEnd + 2
        let fieldLines = HTTP1HeadLines.lineCount(in: raw, from: lineStart) - 1
        // A long head is made `HTTPHeaders` as it is read, in one array sized
        // for every line (and the `Via` the listener adds).
        var fields: [(String, String)] = []
        if fieldLines > ResponseFields.maxLines {
            scan.dropped = nil
            fields.reserveCapacity(fieldLines + 1)
        }
        var index: UInt64 = 0
        while true {
            // The head ends in CRLFCRLF: no line end here is a bare LF or CR.
            guard let end = HTTP1HeadLines.lineEnd(in: raw, from: lineStart) else { throw .malformedHeaderLine }
            if end == lineStart { break }
            guard let (colon, valueStart, valueEnd) = HTTP1HeadLines.fieldBounds(raw, from: lineStart, to: end) else { throw .malformedHeaderLine }
            var hopByHop = false
            if HTTP1HeadLines.equalsIgnoringCase(raw, from: lineStart, to: colon, "content-length") {
                guard ContentLengthField.merge(raw, valueStart..<valueEnd, into: &scan.contentLength) else { throw .invalidContentLength }
            } else if HopByHopHeaders.isAlwaysHopByHop(raw, from: lineStart, to: colon) {
                hopByHop = true
                if HTTP1HeadLines.equalsIgnoringCase(raw, from: lineStart, to: colon, "transfer-encoding") {
                    let value = HTTP1HeadLines.text(raw, valueStart..<valueEnd)
                    scan.transferEncoding = scan.transferEncoding.map { $0 + ", " + value } ?? value
                } else if HTTP1HeadLines.equalsIgnoringCase(raw, from: lineStart, to: colon, "connection") {
                    scan.connection.add(raw, valueStart..<valueEnd)
                }
            }
            if let dropped = scan.dropped {
                if hopByHop { scan.dropped = dropped | (1 << index) }
            } else if !hopByHop {
                fields.append((
                    HTTP1HeadLines.text(raw, lineStart..<colon),
                    HTTP1HeadLines.text(raw, valueStart..<valueEnd)
                ))
            }
            index += 1
            lineStart = end + 2
        }
        scan.lines = (statusEnd + 2)..<lineStart
        if scan.dropped == nil { scan.headers = HTTPHeaders(fields) }
        return scan
    }

    /// The options of the `Connection` fields: `close`, `keep-alive`, and the
    /// names of other hop-by-hop fields (rare: kept in an array only then).
    struct ConnectionOptions {
        var close = false
        var keepAlive = false
        var named: [String] = []

        /// Adds one field's comma-separated tokens (`raw[range]`), read from
        /// the head's bytes: a string is made only of a token that names a field.
        mutating func add(_ raw: UnsafeRawBufferPointer, _ range: Range<Int>) {
            var start = range.lowerBound
            while start < range.upperBound {
                var comma = start
                while comma < range.upperBound, raw[comma] != UInt8(ascii: ",") { comma += 1 }
                var first = start
                var end = comma
                while first < end, raw[first] == UInt8(ascii: " ") || raw[first] == UInt8(ascii: "\t") { first += 1 }
                while end > first, raw[end - 1] == UInt8(ascii: " ") || raw[end - 1] == UInt8(ascii: "\t") { end -= 1 }
                if first < end {
                    if HTTP1HeadLines.equalsIgnoringCase(raw, from: first, to: end, "close") {
                        close = true
                    } else if HTTP1HeadLines.equalsIgnoringCase(raw, from: first, to: end, "keep-alive") {
                        keepAlive = true
                    } else {
                        named.append(HTTP1HeadLines.text(raw, first..<end))
                    }
                }
                start = comma + 1
            }
        }
    }

    /// `HTTP/1.x SSS[ reason]`.
    /// The reason phrase is read only for a code NIO has no name for: NIO's
    /// status keeps its own phrase for the others.
    private static func statusLine(_ raw: UnsafeRawBufferPointer, upTo end: Int) throws(HTTP1FramingError) -> (minor: Int, status: HTTPResponseStatus) {
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
        var status = HTTPResponseStatus(statusCode: code)
        if case .custom = status, end > 13 { status = HTTPResponseStatus(statusCode: code, reasonPhrase: HTTP1HeadLines.text(raw, 13..<end)) }
        return (raw[7] == UInt8(ascii: "1") ? 1 : 0, status)
    }
}
