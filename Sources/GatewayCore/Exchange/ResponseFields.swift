public import NIOCore
public import NIOHTTP1

/// The end-to-end fields of an upstream response, kept as the bytes the
/// upstream sent (its field lines, the hop-by-hop ones marked as dropped) until
/// something reads them as `HTTPHeaders`. The exchange copies those lines to
/// the client as they are, with no string made per field; a policy
/// or an observer that reads the fields pays for the strings then. Responses
/// the gateway makes, and fields a policy changed, are `HTTPHeaders`.
public struct ResponseFields: Sendable {
    public enum Storage: Sendable {
        /// The field section as read, each line `name: value` CRLF (checked by
        /// the framer); bit `i` of `dropped` set: line `i` is not passed on.
        case lines(ByteBuffer, dropped: UInt64)
        case headers(HTTPHeaders)
    }

    public private(set) var storage: Storage

    /// The fields are an HTTP/2 field section's as the upstream stream read
    /// and checked them (``init(http2Section:)``): every name lowercase, none
    /// connection-specific or pseudo, every byte one HTTP/1.1 carries. An
    /// HTTP/2 client's HEADERS take them as they are, with no second pass. Any
    /// change but a drop (the fields set anew) clears it.
    public private(set) var isHTTP2Ready = false

    /// The most lines kept as bytes: one bit each in `dropped`.
    public static let maxLines = 64

    public init(_ headers: HTTPHeaders = HTTPHeaders()) {
        storage = .headers(headers)
    }

    /// Fields an HTTP/2 upstream sent, checked as ``isHTTP2Ready`` says.
    public init(http2Section headers: HTTPHeaders) {
        storage = .headers(headers)
        isHTTP2Ready = true
    }

    /// `lines` holds at most ``maxLines`` lines, without the head's empty last line.
    public init(lines: ByteBuffer, dropped: UInt64) {
        storage = .lines(lines, dropped: dropped)
    }

    /// The fields passed on, in order; made from the lines on every read (set: kept as they are given).
    public var headers: HTTPHeaders {
        get {
            switch storage {
            case .headers(let headers):
                return headers
            case .lines(let lines, let dropped):
                var fields: [(String, String)] = []
                // Sized once, with room for the `Via` an observer's copy gets.
                fields.reserveCapacity(lines.withUnsafeReadableBytes { HTTP1HeadLines.lineCount(in: $0, from: 0) } + 1)
                Self.forEachLine(of: lines, dropped: dropped) { raw, line in
                    if let field = HTTP1HeadLines.field(raw, from: line.start, to: line.end) { fields.append(field) }
                }
                return HTTPHeaders(fields)
            }
        }
        set {
            storage = .headers(newValue)
            isHTTP2Ready = false
        }
    }

    /// The same fields holding no slice of the buffer they were read into (lines
    /// are copied, compactly): for keeping beyond the read, so the channel can
    /// reuse its receive buffer.
    public func detached() -> ResponseFields {
        guard case .lines(let lines, let dropped) = storage else { return self }
        var copy = ByteBufferAllocator().buffer(capacity: lines.readableBytes)
        copy.writeImmutableBuffer(lines)
        return ResponseFields(lines: copy, dropped: dropped)
    }

    /// Fields named `names` (any case) are not passed on: their lines are
    /// marked dropped (still there for ``receivedHeaders``), or removed from `HTTPHeaders`.
    public mutating func drop(named names: [String]) {
        switch storage {
        case .headers(var headers):
            for name in names { headers.remove(name: name) }
            storage = .headers(headers)
        case .lines(let lines, var dropped):
            var index: UInt64 = 0
            lines.withUnsafeReadableBytes { raw in
                var start = 0
                while let end = HTTP1HeadLines.lineEnd(in: raw, from: start), index < 64 {
                    var colon = start
                    while raw[colon] != UInt8(ascii: ":") { colon += 1 }
                    let name = HTTP1HeadLines.text(raw, start..<colon)
                    let lowercased = name.lowercased()
                    if names.contains(where: { $0.lowercased() == lowercased }) { dropped |= 1 << index }
                    start = end + 2
                    index += 1
                }
            }
            storage = .lines(lines, dropped: dropped)
        }
    }

    /// Every field as received, the hop-by-hop ones not passed on included
    /// (`Upgrade`, `Connection`): for the rare check that must read them (a WebSocket 101).
    public var receivedHeaders: HTTPHeaders {
        guard case .lines(let lines, _) = storage else { return headers }
        return ResponseFields(lines: lines, dropped: 0).headers
    }

    /// Whether a field passed on has a name `predicate` accepts (given its
    /// bytes): reads no value and, for lines, makes no string.
    public func containsName(where predicate: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        switch storage {
        case .headers(let headers):
            for (name, _) in headers {
                var name = name
                if name.withUTF8({ predicate(UnsafeRawBufferPointer($0)) }) { return true }
            }
            return false
        case .lines(let lines, let dropped):
            var found = false
            Self.forEachLine(of: lines, dropped: dropped) { raw, line in
                if !found { found = predicate(UnsafeRawBufferPointer(rebasing: raw[line.start..<line.colon])) }
            }
            return found
        }
    }

    /// One line passed on: where it starts, where its name ends (the colon), where its CR is.
    public struct Line {
        public let start: Int
        public let colon: Int
        public let end: Int

        @inlinable
        init(start: Int, colon: Int, end: Int) {
            self.start = start
            self.colon = colon
            self.end = end
        }
    }

    /// Calls `body` with each line passed on, and the lines' bytes.
    @inlinable
    public static func forEachLine(of lines: ByteBuffer, dropped: UInt64, _ body: (UnsafeRawBufferPointer, Line) -> Void) {
        lines.withUnsafeReadableBytes { raw in
            var start = 0
            var index: UInt64 = 0
            while let end = HTTP1HeadLines.lineEnd(in: raw, from: start) {
                if dropped & (1 << index) == 0 {
                    // The framer checked every line: each has its colon.
                    var colon = start
                    while raw[colon] != UInt8(ascii: ":") { colon += 1 }
                    body(raw, Line(start: start, colon: colon, end: end))
                }
                start = end + 2
                index += 1
            }
        }
    }
}
