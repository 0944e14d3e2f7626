package import GatewayCore
package import NIOCore

/// A client request as the framer hands it to the connection's handler, by
/// value: no part goes through the pipeline, so none is boxed.
package enum ClientRequestPart {
    /// A head without a body (``RequestHeadValidator`` found no framing).
    case head(ClientRequestHead)
    /// A head with the body framing ``RequestHeadValidator`` found in it.
    case headWithBody(ClientRequestHead, framing: RequestHeadValidator.BodyFraming)
    /// A head ``RequestHeadValidator`` refuses, and why: nothing of its request
    /// follows (the connection ends after the answer).
    case refused(ClientRequestHead, GatewayError)
    case body(ByteBuffer)
    case end

    /// The head of a head part; nil for body and end parts.
    package var requestHead: ClientRequestHead? {
        switch self {
        case .head(let head), .headWithBody(let head, _), .refused(let head, _): head
        case .body, .end: nil
        }
    }

    /// A body follows this head.
    var announcesBody: Bool {
        if case .headWithBody = self { return true }
        return false
    }

    /// The validator's verdict on a head part; nil for body and end parts.
    package var verdict: Result<RequestHeadValidator.BodyFraming, GatewayError>? {
        switch self {
        case .head: .success(.none)
        case .headWithBody(_, let framing): .success(framing)
        case .refused(_, let error): .failure(error)
        case .body, .end: nil
        }
    }
}

/// Frames the requests of one client connection from its bytes: heads parsed
/// by ``HTTP1RequestHeadParser`` and judged by ``RequestHeadValidator`` once
/// CRLFCRLF is in, bodies by `Content-Length` or chunked
/// (``ChunkedBodyDecoder``), keep-alive and pipelining. Body parts are slices of
/// the bytes read, never copies; only a head split across reads is joined.
///
/// A pure value, like the upstream side's `HTTP1ResponseFramer`: the handler
/// appends what it reads (``append(_:)``) and pulls parts (``next()``) until
/// there are none. After an upgrade-like request (`CONNECT`, `Upgrade`) it stops:
/// what follows is for whoever takes the connection over (``takeUnparsed()``).
package struct HTTP1RequestFramer {
    enum State: Equatable {
        /// Waiting for a head; the end of it is searched from `scanFrom` on.
        case head(scanFrom: Int)
        case length(remaining: Int)
        case chunked(ChunkedBodyDecoder)
        /// After an upgrade-like request: bytes are kept, not parsed.
        case upgraded
        /// A head was refused, or the bytes were no HTTP: nothing more is framed.
        case stopped
    }

    private(set) var state = State.head(scanFrom: 0)
    /// Bytes read and not framed yet.
    private var input: ByteBuffer?
    /// The request in progress is upgrade-like: stop after its end.
    private var upgradeAfterEnd = false
    let maxHeadBytes: Int

    package init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    package mutating func append(_ bytes: ByteBuffer) {
        guard state != .stopped else { return }
        input.appendUnframed(bytes)
    }

    /// The next part the bytes appended so far make, or nil until more are read.
    package mutating func next() throws(GatewayError) -> ClientRequestPart? {
        // A request without a body, or whose body is all in, ends without more bytes.
        if case .length(0) = state { return finishRequest() }
        guard var bytes = input, bytes.readableBytes > 0 else { return nil }
        defer { input = state == .stopped || bytes.readableBytes == 0 ? nil : bytes }
        switch state {
        case .head(let scanFrom):
            return try nextHead(&bytes, scanFrom: scanFrom)
        case .length(let remaining):
            let slice = bytes.readSlice(length: min(remaining, bytes.readableBytes))!
            state = .length(remaining: remaining - slice.readableBytes)
            return .body(slice)
        case .chunked(var decoder):
            let event: ChunkedBodyDecoder.Event?
            do {
                event = try decoder.next(&bytes)
            } catch {
                state = .stopped
                throw GatewayError(.badRequest, "malformed chunked request body")
            }
            state = .chunked(decoder)
            switch event {
            case .data(let slice): return .body(slice)
            case .end: return finishRequest()
            case nil: return nil
            }
        case .upgraded, .stopped:
            return nil
        }
    }

    /// The bytes after an upgrade-like request, for the tunnel or the TLS
    /// handler that takes the connection over; nil in any other state.
    mutating func takeUnparsed() -> ByteBuffer? {
        guard state == .upgraded, let bytes = input, bytes.readableBytes > 0 else { return nil }
        input = nil
        return bytes
    }

    private mutating func finishRequest() -> ClientRequestPart {
        state = upgradeAfterEnd ? .upgraded : .head(scanFrom: 0)
        return .end
    }

    private mutating func nextHead(_ bytes: inout ByteBuffer, scanFrom: Int) throws(GatewayError) -> ClientRequestPart? {
        if scanFrom == 0 {
            // Empty lines before a request line are ignored (RFC 9112 §2.2).
            while let byte = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self), byte == 13 || byte == 10 {
                bytes.moveReaderIndex(forwardBy: 1)
            }
            guard bytes.readableBytes > 0 else { return nil }
        }
        switch bytes.withUnsafeReadableBytes({ HTTP1HeadLines.scanHead($0, from: scanFrom) }) {
        case .bareLineFeed:
            state = .stopped
            throw GatewayError(.badRequest, "malformed request: a line ends in LF without CR")
        case .incomplete:
            guard bytes.readableBytes <= maxHeadBytes else {
                state = .stopped
                throw GatewayError(.headTooLarge, "the request line and headers exceed the limit")
            }
            state = .head(scanFrom: max(0, bytes.readableBytes - 3))
            return nil
        case .complete(let length):
            guard length <= maxHeadBytes else {
                state = .stopped
                throw GatewayError(.headTooLarge, "the request line and headers exceed the limit")
            }
            let parsed = bytes.withUnsafeReadableBytes { raw in
                Result { () throws(GatewayError) in try HTTP1RequestHeadParser.parse(UnsafeRawBufferPointer(rebasing: raw[..<length])) }
            }
            let head: ClientRequestHead
            switch parsed {
            case .success(let parsedHead): head = parsedHead
            case .failure(let error):
                state = .stopped
                throw error
            }
            bytes.moveReaderIndex(forwardBy: length)
            let names = RequestHeadValidator.Names(head.headers)
            upgradeAfterEnd = head.method == .CONNECT || names.upgrade
            let framing: RequestHeadValidator.BodyFraming
            do {
                try RequestHeadValidator.checkParsedHeaders(of: head, names: names)
                framing = try RequestHeadValidator.framing(of: head, names: names)
            } catch {
                state = .stopped
                return .refused(head, error)
            }
            switch framing {
            case .none:
                state = .length(remaining: 0)
                return .head(head)
            case .length(let length): state = .length(remaining: length)
            case .chunked: state = .chunked(ChunkedBodyDecoder())
            }
            return .headWithBody(head, framing: framing)
        }
    }
}
