/// The client connection's protocol state, without I/O: which request is in
/// flight, how far its request and response have come, and what to do with each
/// part the decoder hands over. ``ClientConnectionHandler`` feeds it events and
/// performs the actions it returns (async-http-client's
/// `HTTP1ConnectionStateMachine` is the model).
///
/// One exchange at a time. Parts of a pipelined next request that arrive while
/// a response is still going out are queued by the handler and replayed when
/// the exchange ends; reads are held meanwhile, so at most one read is queued.
struct ClientConnectionStateMachine: Equatable {
    enum RequestPhase: Equatable {
        /// Body parts are still arriving.
        case body
        case complete
    }

    enum ResponsePhase: Equatable {
        case pending
        case streaming
        case complete
    }

    enum State: Equatable {
        /// Waiting for a request head.
        case idle
        case exchange(request: RequestPhase, response: ResponsePhase, keepAlive: Bool)
        /// The last response is going out; the connection closes once it is written.
        case closing
        /// `CONNECT`: a tunnel or interception takes the connection over.
        case handedOver
        case closed
    }

    private(set) var state = State.idle

    enum PartAction: Equatable {
        /// A new exchange: route and start it.
        case start
        /// Hand the part to the exchange in flight.
        case forward
        /// The response is complete: the rest of this request's body is read and dropped.
        case discard
        /// A part of a pipelined request: keep it until the exchange ends.
        case queue
        /// Nothing to do (the connection is closing or taken over).
        case ignore
    }

    enum EndAction: Equatable {
        case forward
        case queue
        case ignore
        /// The exchange is over: read the next request (`keepAlive`) or close.
        case exchangeDone(keepAlive: Bool)
        /// The response is complete, the request body is not: drop the rest (or close if not keep-alive).
        case awaitRequestEnd(keepAlive: Bool)
    }

    mutating func requestHead(keepAlive: Bool) -> PartAction {
        switch state {
        case .idle:
            state = .exchange(request: .body, response: .pending, keepAlive: keepAlive)
            return .start
        case .exchange(request: .complete, _, _):
            return .queue
        case .exchange(request: .body, _, _):
            // The decoder ends a request before it starts the next.
            assertionFailure("request head while a request body is in progress")
            return .ignore
        case .closing, .handedOver, .closed:
            return .ignore
        }
    }

    mutating func requestBody() -> PartAction {
        switch state {
        case .exchange(request: .body, response: .complete, _):
            return .discard
        case .exchange(request: .body, _, _):
            return .forward
        case .exchange(request: .complete, _, _):
            return .queue
        case .idle:
            assertionFailure("request body without a request head")
            return .ignore
        case .closing, .handedOver, .closed:
            return .ignore
        }
    }

    mutating func requestEnd() -> EndAction {
        switch state {
        case .exchange(request: .body, response: .complete, let keepAlive):
            return finish(keepAlive: keepAlive)
        case .exchange(request: .body, let response, let keepAlive):
            state = .exchange(request: .complete, response: response, keepAlive: keepAlive)
            return .forward
        case .exchange(request: .complete, _, _):
            return .queue
        case .idle:
            assertionFailure("request end without a request head")
            return .ignore
        case .closing, .handedOver, .closed:
            return .ignore
        }
    }

    /// The response head goes out; returns whether the connection stays open after it.
    mutating func responseHead(keepAlive: Bool) -> Bool {
        guard case .exchange(let request, .pending, let wanted) = state else {
            assertionFailure("response head in state \(state)")
            return false
        }
        state = .exchange(request: request, response: .streaming, keepAlive: wanted && keepAlive)
        return wanted && keepAlive
    }

    /// Whether the response head has gone out (an error can then no longer be answered).
    var responseStarted: Bool {
        if case .exchange(_, .pending, _) = state { return false }
        return true
    }

    mutating func responseEnd() -> EndAction {
        switch state {
        case .exchange(request: .complete, _, let keepAlive):
            return finish(keepAlive: keepAlive)
        case .exchange(request: .body, _, let keepAlive):
            state = .exchange(request: .body, response: .complete, keepAlive: keepAlive)
            return .awaitRequestEnd(keepAlive: keepAlive)
        case .idle, .closing, .handedOver, .closed:
            assertionFailure("response end in state \(state)")
            return .ignore
        }
    }

    /// The connection will close after what is being written (an error, a drain).
    mutating func closeAfterWrite() {
        if state != .closed { state = .closing }
    }

    mutating func handOver() {
        state = .handedOver
    }

    mutating func closed() {
        state = .closed
    }

    var isIdle: Bool { state == .idle }

    /// Whether the client asked to keep the connection open after the exchange in flight.
    var keepAliveWanted: Bool {
        if case .exchange(_, _, let keepAlive) = state { return keepAlive }
        return false
    }

    /// Whether a read may go to the socket now. In an exchange whose request body
    /// is still arriving, the exchange's own demand decides too. After the
    /// request is complete reads go on: what comes is the next request, queued
    /// until this exchange ends (the handler stops reading once one is queued),
    /// and holding reads on every keep-alive request would cost two `epoll_ctl`
    /// calls per request. Not so on a connection that ends with this exchange
    /// (an upgrade-like request: the decoder would buffer what follows unparsed).
    var allowsRead: Bool {
        switch state {
        case .idle, .exchange(request: .body, _, _): return true
        case .exchange(request: .complete, _, let keepAlive): return keepAlive
        case .closing, .handedOver, .closed: return false
        }
    }

    private mutating func finish(keepAlive: Bool) -> EndAction {
        state = keepAlive ? .idle : .closing
        return .exchangeDone(keepAlive: keepAlive)
    }
}
