/// The state of one HTTP/2 stream of an intercepted client connection,
/// without I/O: how far the request came (no HEADERS yet, its body, its
/// END_STREAM), how far the response went (nothing yet, its HEADERS, its
/// END_STREAM or a reset), and whether a `read()` is held while the exchange
/// takes no request body. The stream handler feeds it the frames it reads and
/// writes and does what it answers; an event the state cannot have stops a
/// debug build (the upstream side's is `UpstreamHTTP2StreamStateMachine`).
struct ClientHTTP2StreamStateMachine: Equatable {
    enum Request: Equatable {
        /// No HEADERS yet.
        case idle
        /// HEADERS arrived; the body (if any) is coming.
        case body
        /// END_STREAM arrived (on DATA or on trailing HEADERS).
        case ended
    }

    enum Response: Equatable {
        /// No HEADERS went out yet (a `100 Continue` does not count).
        case pending
        /// HEADERS went out; the body goes.
        case streaming
        /// END_STREAM went out, or the stream was reset or closed.
        case ended
    }

    private(set) var request = Request.idle
    private(set) var response = Response.pending
    /// A `read()` is held while the exchange takes no request body.
    private(set) var readHeld = false

    var headSent: Bool { response != .pending }
    var responseEnded: Bool { response == .ended }

    // MARK: Request

    /// What a HEADERS frame from the client is.
    enum Headers: Equatable {
        /// The request's head: start its exchange; `endStream`: it has no body.
        case start(endStream: Bool)
        /// Trailers with END_STREAM: the body ends here (HTTP/1.1 upstreams take no request trailers).
        case endRequest
        case ignore
    }

    mutating func headersReceived(endStream: Bool) -> Headers {
        switch request {
        case .idle:
            request = .body
            return .start(endStream: endStream)
        case .body:
            return endStream ? .endRequest : .ignore
        case .ended:
            return .ignore
        }
    }

    /// END_STREAM arrived; true the first time (the exchange is told once).
    mutating func requestEnded() -> Bool {
        switch request {
        case .body:
            request = .ended
            return true
        case .idle:
            assertionFailure("a request ended before its HEADERS")
            return false
        case .ended:
            return false
        }
    }

    // MARK: Reads

    enum Read: Equatable {
        case read
        /// Held; `first`: it was not held before (the body timeout's clock stops).
        case hold(first: Bool)
    }

    /// The channel asks to read; `mayRead`: the exchange takes request body (or there is none).
    mutating func read(mayRead: Bool) -> Read {
        guard !mayRead else { return .read }
        defer { readHeld = true }
        return .hold(first: !readHeld)
    }

    /// The exchange takes request body again: true when a held read goes now.
    mutating func demand(mayRead: Bool) -> Bool {
        guard readHeld, mayRead else { return false }
        readHeld = false
        return true
    }

    // MARK: Response

    /// The response's HEADERS went out (with END_STREAM: a response without a body).
    mutating func headWritten(endStream: Bool) {
        assert(response == .pending, "a second response head on a stream")
        response = endStream ? .ended : .streaming
    }

    /// Whether a part of the response body goes out (after the head, before the end).
    var writesBody: Bool { response == .streaming }

    /// The response ends: true when END_STREAM is written now, false when it went already.
    mutating func responseEnd() -> Bool {
        switch response {
        case .streaming:
            response = .ended
            return true
        case .pending:
            assertionFailure("a response ended before its head")
            response = .ended
            return true
        case .ended:
            return false
        }
    }

    /// The stream was reset (by the gateway: an aborted response, a timeout) or closed.
    mutating func closed() {
        response = .ended
    }

    enum Timeout: Equatable {
        /// Answer the error (408): nothing went out yet and the client reads.
        case respond
        /// Reset the stream: the response began, or the client does not read.
        case reset
    }

    /// The body or send timeout passed (`sendTimeout`: the client did not read).
    mutating func timedOut(sendTimeout: Bool) -> Timeout {
        if !sendTimeout, response == .pending { return .respond }
        response = .ended
        return .reset
    }
}
