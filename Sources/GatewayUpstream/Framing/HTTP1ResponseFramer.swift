package import GatewayCore
package import NIOCore
package import NIOHTTP1

/// Frames the HTTP/1.1 responses of one upstream connection from its bytes: the
/// gateway's own HTTP/1 framing, in place of NIOHTTP1's `HTTPResponseDecoder`
/// and its per-part `NIOAny` boxing.
///
/// A pure value: the connection's handler tells it a request went out
/// (``expectResponse(isHEAD:)``), appends what it reads (``append(_:)``) and
/// pulls events (``next()``) until there are none. Body events are slices of the
/// bytes read, never copies; only a head or a chunk line split across reads is
/// joined. The framing follows RFC 9112 §6.3, as strictly as llhttp does by
/// default: `Content-Length` with `Transfer-Encoding`, lengths that disagree,
/// obs-fold, whitespace before a colon and bare LF line ends are refused; and
/// so is a `Transfer-Encoding` other than `chunked` alone (`gzip`), whose body
/// the client would get still coded but labelled identity.
package struct HTTP1ResponseFramer {
    package enum Event {
        case head(Head)
        case body(ByteBuffer)
        case end
    }

    /// A final response head (or a 101), and what the exchange needs of it.
    package struct Head {
        package let status: HTTPResponseStatus
        /// Its end-to-end fields only, as the upstream's bytes.
        package let fields: ResponseFields
        /// `Content-Length`, when the body is not chunked.
        package let declaredLength: Int?
        /// The connection may carry another exchange after this response:
        /// keep-alive by version and `Connection`, and a body not read until close.
        package let keepAlive: Bool
        /// The body ends when the connection does.
        package let untilClose: Bool
    }

    /// The longest head (status line and fields) taken by default.
    package static let defaultMaxHeadBytes = 80 * 1024

    enum State: Equatable {
        /// No response expected: bytes now are a protocol error.
        case idle
        /// Waiting for a head; CRLFCRLF is searched from `scanFrom` on.
        case head(scanFrom: Int)
        case length(remaining: Int)
        case chunked(ChunkedBodyDecoder)
        case untilClose
        /// A failure was thrown: nothing more is framed on this connection.
        case failed
    }

    /// Set by the extensions that frame heads and chunked bodies too.
    var state: State = .idle
    /// Bytes read and not framed yet.
    private var input: ByteBuffer?
    private var isHEAD = false
    let maxHeadBytes: Int

    package init(maxHeadBytes: Int = Self.defaultMaxHeadBytes) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// A request went out: its response comes next.
    package mutating func expectResponse(isHEAD: Bool) {
        precondition(state == .idle, "a response is expected only between responses")
        self.isHEAD = isHEAD
        state = .head(scanFrom: 0)
    }

    /// Bytes read from the connection.
    package mutating func append(_ bytes: ByteBuffer) {
        input.appendUnframed(bytes)
    }

    /// The bytes read after a 101's head (the protocol switched to): for the
    /// tunnel that takes the connection over. Nothing is framed after it.
    package mutating func takeUnparsed() -> ByteBuffer? {
        defer { input = nil }
        guard let bytes = input, bytes.readableBytes > 0 else { return nil }
        return bytes
    }

    /// Whether bytes are buffered that no event has taken yet.
    package var hasUnframedBytes: Bool { (input?.readableBytes ?? 0) > 0 }

    /// The next event the bytes appended so far make, or nil until more are read.
    package mutating func next() throws(HTTP1FramingError) -> Event? {
        guard var bytes = input, bytes.readableBytes > 0 else {
            // A body of nothing left, or a bodiless response, ends without more bytes.
            if case .length(0) = state { return finish() }
            return nil
        }
        defer { input = state == .failed || bytes.readableBytes == 0 ? nil : bytes }
        switch state {
        case .idle:
            return try fail(.unsolicitedBytes)
        case .failed:
            return nil
        case .head(let scanFrom):
            return try nextHead(&bytes, scanFrom: scanFrom)
        case .length(let remaining):
            guard remaining > 0 else { return finish() }
            let slice = bytes.readSlice(length: min(remaining, bytes.readableBytes))!
            state = .length(remaining: remaining - slice.readableBytes)
            return .body(slice)
        case .untilClose:
            return .body(bytes.readSlice(length: bytes.readableBytes)!)
        case .chunked(let decoder):
            return try nextChunked(&bytes, decoder)
        }
    }

    /// The connection closed: the end of a body read until close, else nothing
    /// (a response cut short is the connection's failure, not the framer's).
    package mutating func inputClosed() -> Event? {
        guard state == .untilClose else { return nil }
        return finish()
    }

    // MARK: Shared by the extensions

    mutating func finish() -> Event {
        state = .idle
        return .end
    }

    mutating func fail(_ error: HTTP1FramingError) throws(HTTP1FramingError) -> Event? {
        state = .failed
        input = nil
        throw error
    }

    /// Where the body of a final response starts, by RFC 9112 §6.3.
    mutating func startBody(of parsed: HTTP1ResponseHeadParser.Parsed) -> Event {
        let code = parsed.status.code
        var untilClose = false
        if isHEAD || code == 204 || code == 304 {
            state = .length(remaining: 0)
        } else {
            switch parsed.framing {
            case .chunked: state = .chunked(ChunkedBodyDecoder())
            case .length(let length): state = .length(remaining: length)
            case .untilClose:
                state = .untilClose
                untilClose = true
            }
        }
        return .head(Head(status: parsed.status, fields: parsed.fields, declaredLength: parsed.declaredLength, keepAlive: parsed.keepAlive && !untilClose, untilClose: untilClose))
    }
}

/// Why the bytes of an upstream connection are not an HTTP/1.1 response.
package enum HTTP1FramingError: Error, Equatable {
    case headTooLarge
    case malformedStatusLine
    case malformedHeaderLine
    case invalidContentLength
    case contentLengthWithTransferEncoding
    /// A `Transfer-Encoding` other than `chunked` alone (`gzip`, `gzip, chunked`):
    /// the gateway does not decode the other codings, and must not pass their
    /// bytes on as identity. (No payload: the error stays a trivial value,
    /// which the typed-throws paths of the framer rely on.)
    case unsupportedTransferCoding
    case malformedChunk
    case unsolicitedBytes

    var message: String {
        switch self {
        case .headTooLarge: "response head too large"
        case .malformedStatusLine: "malformed response status line"
        case .malformedHeaderLine: "malformed response header field"
        case .invalidContentLength: "invalid or conflicting Content-Length in the response"
        case .contentLengthWithTransferEncoding: "response with both Content-Length and Transfer-Encoding"
        case .unsupportedTransferCoding:
            "unsupported transfer coding in the response (a Transfer-Encoding other than chunked alone): the gateway passes on chunked alone"
        case .malformedChunk: "malformed chunk in the response body"
        case .unsolicitedBytes: "response without a request in flight"
        }
    }
}
