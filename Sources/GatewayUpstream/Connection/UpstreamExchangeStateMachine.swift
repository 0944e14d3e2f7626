import GatewayCore
import NIOCore
import NIOHTTP1

/// The protocol state of one pooled upstream connection, without I/O: whether an
/// exchange is in flight, how far its request and response have come, whether a
/// read is held for a slow consumer, and the request timeout's clock.
/// ``UpstreamExchangeHandler`` feeds it events and performs the single
/// ``Action`` each one returns (async-http-client's `HTTP1ConnectionStateMachine`
/// run by `HTTP1ClientChannelHandler` is the model); the actions are in `+Action.swift`.
///
/// A complete response ends its exchange at once, so there is no resting
/// "response complete" phase: the connection goes back to the pool, or closes
/// when it cannot carry another exchange (either side asked to close, or the
/// request was still being sent: its rest would be taken for the next request).
///
/// Events the network or a late callback can cause (a response nobody asked
/// for, a stale writer, a write completing after its exchange failed) are
/// answered; events only a bug here or in the pool can cause are asserted, with
/// a harmless fallback in release builds.
struct UpstreamExchangeStateMachine {
    /// How far the request has been written.
    enum RequestPhase: Equatable {
        /// The head is written; the delegate streams the body through its writer.
        case streaming
        /// The end of the request is queued, its write not yet confirmed.
        case endQueued
        /// The end of the request reached the socket.
        case sent
    }

    /// How far the response has been read.
    enum ResponsePhase: Equatable {
        case awaitingHead
        /// Body parts go to the delegate; `keepAlive` is what the response head said.
        case streaming(keepAlive: Bool)
    }

    struct Exchange: Equatable {
        let id: Int
        let isHEAD: Bool
        /// The request did not ask to close the connection.
        let requestKeepAlive: Bool
        /// A WebSocket handshake: a valid 101 hands the connection over.
        let upgrade: WebSocketUpgrade?
        var request: RequestPhase
        var response: ResponsePhase
        /// Observed writes (the end of the request, streamed body chunks) not yet completed.
        var outstandingWrites: Int
    }

    enum State: Equatable {
        /// Open, no exchange: the connection is in the pool (idle, or leased and not started).
        case idle
        case exchange(Exchange)
        /// Closed or closing: no exchange can start on it.
        case closed
        /// A handshake's 101 came: the connection is the delegate's tunnel, nothing is framed here any more.
        case upgraded
    }

    private(set) var state: State = .idle
    /// A `read()` is held back because the delegate cannot take more.
    private(set) var readHeld = false
    private(set) var timeout: UpstreamRequestTimeout
    private var lastExchangeID = 0

    init(requestTimeout: TimeAmount) {
        self.timeout = UpstreamRequestTimeout(timeout: requestTimeout)
    }

    /// No exchange can run on it any more (closed, or handed over after a 101).
    var isClosed: Bool { state == .closed || state == .upgraded }

    // MARK: Request side

    /// Starts an exchange. `endQueued`: the whole request (head, any buffered
    /// body, end) is written at once; otherwise the delegate streams the body.
    mutating func startExchange(isHEAD: Bool, keepAlive: Bool, upgrade: WebSocketUpgrade? = nil, endQueued: Bool, now: NIODeadline) -> StartDecision {
        switch state {
        case .idle:
            lastExchangeID += 1
            state = .exchange(
                Exchange(
                    id: lastExchangeID, isHEAD: isHEAD, requestKeepAlive: keepAlive, upgrade: upgrade,
                    request: endQueued ? .endQueued : .streaming, response: .awaitingHead,
                    outstandingWrites: endQueued ? 1 : 0
                )
            )
            updateTimeout(now: now)
            return .start(exchangeID: lastExchangeID)
        case .closed, .upgraded:
            return .refuseClosed
        case .exchange:
            assertionFailure("an upstream connection leased twice")
            return .refuseBusy
        }
    }

    /// The delegate writes a chunk of its streamed body (`isEnd`: with the end of the request).
    mutating func requestWrite(exchangeID: Int, isEnd: Bool, now: NIODeadline) -> WriteDecision {
        guard case .exchange(var exchange) = state, exchange.id == exchangeID else {
            // The writer's exchange is over (the pool may have started another).
            return .refuse(beforeHead: true)
        }
        guard exchange.request == .streaming else {
            return .refuse(beforeHead: exchange.response == .awaitingHead)
        }
        exchange.outstandingWrites += 1
        if isEnd { exchange.request = .endQueued }
        state = .exchange(exchange)
        updateTimeout(now: now)
        return .write
    }

    /// An observed write reached the socket.
    mutating func writeSucceeded(exchangeID: Int, isEnd: Bool, now: NIODeadline) -> Action {
        guard case .exchange(var exchange) = state, exchange.id == exchangeID else { return .none }
        guard exchange.outstandingWrites > 0 else {
            assertionFailure("a write completed that was not counted")
            return .none
        }
        exchange.outstandingWrites -= 1
        timeout.progress(now: now)
        var action = Action.none
        if isEnd {
            assert(exchange.request == .endQueued, "the end of a request written twice")
            exchange.request = .sent
            action = .requestSent
        }
        state = .exchange(exchange)
        updateTimeout(now: now)
        return action
    }

    /// An observed write failed (the writes queued after it failed too).
    mutating func writeFailed(exchangeID: Int, error: any Error) -> Action {
        abort(exchangeID: exchangeID, error: error)
    }

    /// The delegate gave up (its request body could not be read, its consumer left).
    mutating func abort(exchangeID: Int, error: any Error) -> Action {
        guard case .exchange(let exchange) = state, exchange.id == exchangeID else { return .none }
        return fail(.error(error))
    }

    // MARK: Response side

    /// A response head arrived, with its `Content-Length` and whether the
    /// connection may carry another exchange after it (the framer found both).
    /// Returns the head to forward, with whether a body follows.
    mutating func responseHead(
        status: HTTPResponseStatus, fields: ResponseFields, declaredLength: Int?, keepAlive: Bool, now: NIODeadline
    ) -> Action {
        guard case .exchange(var exchange) = state else { return unexpectedResponsePart() }
        guard exchange.response == .awaitingHead else { return fail(.protocolViolation(.secondHead)) }
        // 1xx other than 101 are dropped by the framer; a 101 answers only a handshake.
        if status.code == 101, let upgrade = exchange.upgrade, exchange.request == .sent || exchange.request == .endQueued {
            if let problem = upgrade.problem(with: fields.receivedHeaders) { return fail(.protocolViolation(.invalidUpgrade(problem))) }
            state = .upgraded
            readHeld = false
            timeout.disarm()
            return .upgrade(UpstreamResponseHead(status: status, fields: fields, declaredLength: nil, hasBody: false))
        }
        guard status.code >= 200 else { return fail(.protocolViolation(.informational(status.code))) }
        exchange.response = .streaming(keepAlive: keepAlive)
        state = .exchange(exchange)
        timeout.progress(now: now)
        updateTimeout(now: now)
        let hasBody = !(exchange.isHEAD || status == .noContent || status == .notModified || declaredLength == 0)
        return .forwardHead(UpstreamResponseHead(status: status, fields: fields, declaredLength: declaredLength, hasBody: hasBody))
    }

    mutating func responseBodyPart(_ buffer: ByteBuffer, now: NIODeadline) -> Action {
        guard case .exchange(let exchange) = state else { return unexpectedResponsePart() }
        guard exchange.response != .awaitingHead else { return fail(.protocolViolation(.bodyBeforeHead)) }
        timeout.progress(now: now)
        return .forwardBody(buffer)
    }

    /// The response is complete: the exchange ends, and the connection goes back
    /// to the pool (a held read resumes) or closes. `bytesFollow`: the upstream
    /// sent more after it, which no request asked for, so the connection closes.
    mutating func responseEnd(bytesFollow: Bool) -> Action {
        guard case .exchange(let exchange) = state else { return unexpectedResponsePart() }
        guard case .streaming(let responseKeepAlive) = exchange.response else {
            return fail(.protocolViolation(.endBeforeHead))
        }
        timeout.disarm()
        guard exchange.request == .sent, exchange.requestKeepAlive, responseKeepAlive, !bytesFollow else {
            state = .closed
            readHeld = false
            return .forwardEnd(.close)
        }
        state = .idle
        let resumeRead = readHeld
        readHeld = false
        return .forwardEnd(.reuse(resumeRead: resumeRead))
    }

    /// The pipeline asks to read. `consumerPaused`: the delegate cannot take more
    /// (asked only while ``isStreamingResponse``); the read is then held.
    mutating func readRequested(consumerPaused: Bool) -> Action {
        guard consumerPaused, isStreamingResponse else { return .read }
        readHeld = true
        // Holding the read can only stop the wait (no clock read needed here).
        if !isWaitingOnUpstream { timeout.disarm() }
        return .none
    }

    /// Whether a response is being streamed: only then may the delegate pause reads.
    var isStreamingResponse: Bool {
        if case .exchange(let exchange) = state, case .streaming = exchange.response { return true }
        return false
    }

    /// The delegate can take more of the response (or, after its end, of nothing):
    /// a held read goes out. A stale writer's demand is ignored.
    mutating func consumerDemand(exchangeID: Int, now: NIODeadline) -> Action {
        switch state {
        case .exchange(let exchange) where exchange.id != exchangeID: return .none
        case .closed, .upgraded: return .none
        case .idle, .exchange: break
        }
        let held = readHeld
        readHeld = false
        updateTimeout(now: now)
        return held ? .read : .none
    }

    /// The framer found the bytes read are not a response: the exchange in
    /// flight fails; bytes with none in flight answer nothing, so the connection closes.
    mutating func malformedResponse(_ error: HTTP1FramingError) -> Action {
        switch state {
        case .idle: return closeIdle()
        case .exchange: return fail(.protocolViolation(.malformed(error)))
        case .closed, .upgraded: return .none
        }
    }

    /// A response part with no exchange in flight: the upstream answered
    /// nothing that was asked (the connection closes), or a part came after the
    /// connection closed (ignored).
    private mutating func unexpectedResponsePart() -> Action {
        state == .idle ? closeIdle() : .none
    }

    /// An exchange is in flight and no byte of its response head has been framed.
    var isAwaitingHead: Bool {
        if case .exchange(let exchange) = state { return exchange.response == .awaitingHead }
        return false
    }

    // MARK: Connection events

    /// The channel went inactive (or the handler left the pipeline).
    mutating func channelClosed() -> Action {
        switch state {
        case .idle:
            state = .closed
            timeout.disarm()
            return .stopTimer
        case .exchange(let exchange):
            return fail(.closed(beforeHead: exchange.response == .awaitingHead))
        case .closed, .upgraded:
            return .none
        }
    }

    /// An error came up the pipeline (decoder, TLS, socket), or the handler was told to fail.
    mutating func errorCaught(_ error: any Error) -> Action {
        switch state {
        case .idle: return closeIdle()
        case .exchange: return fail(.error(error))
        case .closed, .upgraded: return .none
        }
    }

    /// The timer task fired. If the upstream made progress since it was
    /// scheduled, the clock stays armed and the handler schedules the task again
    /// for ``UpstreamRequestTimeout/deadline``; once it has run out, the exchange fails.
    mutating func timerFired(now: NIODeadline) -> Action {
        guard case .exchange(let exchange) = state, timeout.hasExpired(now: now) else { return .none }
        return fail(.timedOut(beforeHead: exchange.response == .awaitingHead))
    }

    /// A lease whose requester went away before starting an exchange goes back.
    mutating func releaseUnused() -> Action {
        switch state {
        case .idle:
            return .release(reusable: true)
        case .closed, .upgraded:
            return .release(reusable: false)
        case .exchange:
            assertionFailure("an unused lease released while an exchange runs on it")
            return .none
        }
    }

    // MARK: Shared transitions

    /// Fails the exchange in flight; the connection closes.
    private mutating func fail(_ failure: Failure) -> Action {
        state = .closed
        readHeld = false
        timeout.disarm()
        return .failExchange(failure)
    }

    /// Closes a connection that has no exchange in flight.
    private mutating func closeIdle() -> Action {
        state = .closed
        readHeld = false
        timeout.disarm()
        return .close
    }

    /// Arms the request timeout while the exchange waits on the upstream, disarms it otherwise.
    private mutating func updateTimeout(now: NIODeadline) {
        timeout.update(waitingOnUpstream: isWaitingOnUpstream, now: now)
    }

    /// Whether the exchange waits for the upstream to do something: a write to
    /// complete, the response head once the request is sent, the next body part
    /// while the delegate takes them. Time spent waiting on the client does not count.
    private var isWaitingOnUpstream: Bool {
        guard case .exchange(let exchange) = state else { return false }
        if exchange.outstandingWrites > 0 { return true }
        switch exchange.response {
        case .awaitingHead: return exchange.request == .sent
        case .streaming: return !readHeld
        }
    }
}
