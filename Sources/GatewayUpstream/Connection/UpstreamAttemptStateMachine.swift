import GatewayCore
import NIOCore
import NIOHTTP1

/// The protocol state of one pooled upstream connection, without I/O: whether an
/// attempt is in flight, how far its request and response have come, whether a
/// read is held for a slow consumer, and the request timeout's clock.
/// ``UpstreamAttemptHandler`` feeds it events and performs the single
/// ``Action`` each one returns (async-http-client's `HTTP1ConnectionStateMachine`
/// run by `HTTP1ClientChannelHandler` is the model); the actions are in `+Action.swift`.
///
/// A complete response ends its attempt at once, so there is no resting
/// "response complete" phase: the connection goes back to the pool, or closes
/// when it cannot carry another attempt (either side asked to close, or the
/// request was still being sent: its rest would be taken for the next request).
///
/// Events the network or a late callback can cause (a response nobody asked
/// for, a stale writer, a write completing after its attempt failed) are
/// answered; events only a bug here or in the pool can cause are asserted, with
/// a harmless fallback in release builds.
struct UpstreamAttemptStateMachine {
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

    struct Attempt: Equatable {
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
        /// Open, no attempt: the connection is in the pool (idle, or leased and not started).
        case idle
        case attempt(Attempt)
        /// Closed or closing: no attempt can start on it.
        case closed
        /// A handshake's 101 came: the connection is the delegate's tunnel, nothing is framed here any more.
        case upgraded
    }

    private(set) var state: State = .idle
    /// A `read()` is held back because the delegate cannot take more.
    private(set) var readHeld = false
    private(set) var timeout: UpstreamRequestTimeout
    private var lastAttemptID = 0

    init(requestTimeout: TimeAmount) {
        self.timeout = UpstreamRequestTimeout(timeout: requestTimeout)
    }

    /// No attempt can run on it any more (closed, or handed over after a 101).
    var isClosed: Bool { state == .closed || state == .upgraded }

    // MARK: Request side

    /// Starts an attempt. `endQueued`: the whole request (head, any buffered
    /// body, end) is written at once; otherwise the delegate streams the body.
    mutating func startAttempt(isHEAD: Bool, keepAlive: Bool, upgrade: WebSocketUpgrade? = nil, endQueued: Bool, now: NIODeadline) -> StartDecision {
        switch state {
        case .idle:
            lastAttemptID += 1
            state = .attempt(
                Attempt(
                    id: lastAttemptID, isHEAD: isHEAD, requestKeepAlive: keepAlive, upgrade: upgrade,
                    request: endQueued ? .endQueued : .streaming, response: .awaitingHead,
                    outstandingWrites: endQueued ? 1 : 0
                )
            )
            updateTimeout(now: now)
            return .start(attemptID: lastAttemptID)
        case .closed, .upgraded:
            return .refuseClosed
        case .attempt:
            assertionFailure("an upstream connection leased twice")
            return .refuseBusy
        }
    }

    /// The delegate writes a chunk of its streamed body (`isEnd`: with the end of the request).
    mutating func requestWrite(attemptID: Int, isEnd: Bool, now: NIODeadline) -> WriteDecision {
        guard case .attempt(var attempt) = state, attempt.id == attemptID else {
            // The writer's attempt is over (the pool may have started another).
            return .refuse(beforeHead: true)
        }
        guard attempt.request == .streaming else {
            return .refuse(beforeHead: attempt.response == .awaitingHead)
        }
        attempt.outstandingWrites += 1
        if isEnd { attempt.request = .endQueued }
        state = .attempt(attempt)
        updateTimeout(now: now)
        return .write
    }

    /// An observed write reached the socket.
    mutating func writeSucceeded(attemptID: Int, isEnd: Bool, now: NIODeadline) -> Action {
        guard case .attempt(var attempt) = state, attempt.id == attemptID else { return .none }
        guard attempt.outstandingWrites > 0 else {
            assertionFailure("a write completed that was not counted")
            return .none
        }
        attempt.outstandingWrites -= 1
        timeout.progress(now: now)
        var action = Action.none
        if isEnd {
            assert(attempt.request == .endQueued, "the end of a request written twice")
            attempt.request = .sent
            action = .requestSent
        }
        state = .attempt(attempt)
        updateTimeout(now: now)
        return action
    }

    /// An observed write failed (the writes queued after it failed too).
    mutating func writeFailed(attemptID: Int, error: any Error) -> Action {
        abort(attemptID: attemptID, error: error)
    }

    /// The delegate gave up (its request body could not be read, its consumer left).
    mutating func abort(attemptID: Int, error: any Error) -> Action {
        guard case .attempt(let attempt) = state, attempt.id == attemptID else { return .none }
        return fail(.error(error))
    }

    // MARK: Response side

    /// A response head arrived, with its `Content-Length` and whether the
    /// connection may carry another attempt after it (the framer found both).
    /// Returns the head to forward, with whether a body follows.
    mutating func responseHead(
        status: HTTPResponseStatus, fields: ResponseFields, declaredLength: Int?, keepAlive: Bool, now: NIODeadline
    ) -> Action {
        guard case .attempt(var attempt) = state else { return unexpectedResponsePart() }
        guard attempt.response == .awaitingHead else { return fail(.protocolViolation(.secondHead)) }
        // 1xx other than 101 are dropped by the framer; a 101 answers only a handshake.
        if status.code == 101, let upgrade = attempt.upgrade, attempt.request == .sent || attempt.request == .endQueued {
            if let problem = upgrade.problem(with: fields.receivedHeaders) { return fail(.protocolViolation(.invalidUpgrade(problem))) }
            state = .upgraded
            readHeld = false
            timeout.disarm()
            return .upgrade(UpstreamResponseHead(status: status, fields: fields, declaredLength: nil, hasBody: false))
        }
        guard status.code >= 200 else { return fail(.protocolViolation(.informational(status.code))) }
        attempt.response = .streaming(keepAlive: keepAlive)
        state = .attempt(attempt)
        timeout.progress(now: now)
        updateTimeout(now: now)
        let hasBody = !(attempt.isHEAD || status == .noContent || status == .notModified || declaredLength == 0)
        return .forwardHead(UpstreamResponseHead(status: status, fields: fields, declaredLength: declaredLength, hasBody: hasBody))
    }

    mutating func responseBodyPart(_ buffer: ByteBuffer, now: NIODeadline) -> Action {
        guard case .attempt(let attempt) = state else { return unexpectedResponsePart() }
        guard attempt.response != .awaitingHead else { return fail(.protocolViolation(.bodyBeforeHead)) }
        timeout.progress(now: now)
        return .forwardBody(buffer)
    }

    /// The response is complete: the attempt ends, and the connection goes back
    /// to the pool (a held read resumes) or closes. `bytesFollow`: the upstream
    /// sent more after it, which no request asked for, so the connection closes.
    mutating func responseEnd(bytesFollow: Bool) -> Action {
        guard case .attempt(let attempt) = state else { return unexpectedResponsePart() }
        guard case .streaming(let responseKeepAlive) = attempt.response else {
            return fail(.protocolViolation(.endBeforeHead))
        }
        timeout.disarm()
        guard attempt.request == .sent, attempt.requestKeepAlive, responseKeepAlive, !bytesFollow else {
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
        if case .attempt(let attempt) = state, case .streaming = attempt.response { return true }
        return false
    }

    /// The delegate can take more of the response (or, after its end, of nothing):
    /// a held read goes out. A stale writer's demand is ignored.
    mutating func consumerDemand(attemptID: Int, now: NIODeadline) -> Action {
        switch state {
        case .attempt(let attempt) where attempt.id != attemptID: return .none
        case .closed, .upgraded: return .none
        case .idle, .attempt: break
        }
        let held = readHeld
        readHeld = false
        updateTimeout(now: now)
        return held ? .read : .none
    }

    /// The framer found the bytes read are not a response: the attempt in
    /// flight fails; bytes with none in flight answer nothing, so the connection closes.
    mutating func malformedResponse(_ error: HTTP1FramingError) -> Action {
        switch state {
        case .idle: return closeIdle()
        case .attempt: return fail(.protocolViolation(.malformed(error)))
        case .closed, .upgraded: return .none
        }
    }

    /// A response part with no attempt in flight: the upstream answered
    /// nothing that was asked (the connection closes), or a part came after the
    /// connection closed (ignored).
    private mutating func unexpectedResponsePart() -> Action {
        state == .idle ? closeIdle() : .none
    }

    /// An attempt is in flight and no byte of its response head has been framed.
    var isAwaitingHead: Bool {
        if case .attempt(let attempt) = state { return attempt.response == .awaitingHead }
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
        case .attempt(let attempt):
            return fail(.closed(beforeHead: attempt.response == .awaitingHead))
        case .closed, .upgraded:
            return .none
        }
    }

    /// An error came up the pipeline (decoder, TLS, socket), or the handler was told to fail.
    mutating func errorCaught(_ error: any Error) -> Action {
        switch state {
        case .idle: return closeIdle()
        case .attempt: return fail(.error(error))
        case .closed, .upgraded: return .none
        }
    }

    /// The timer task fired. If the upstream made progress since it was
    /// scheduled, the clock stays armed and the handler schedules the task again
    /// for ``UpstreamRequestTimeout/deadline``; once it has run out, the attempt fails.
    mutating func timerFired(now: NIODeadline) -> Action {
        guard case .attempt(let attempt) = state, timeout.hasExpired(now: now) else { return .none }
        return fail(.timedOut(beforeHead: attempt.response == .awaitingHead))
    }

    /// A lease whose requester went away before starting an attempt goes back.
    mutating func releaseUnused() -> Action {
        switch state {
        case .idle:
            return .release(reusable: true)
        case .closed, .upgraded:
            return .release(reusable: false)
        case .attempt:
            assertionFailure("an unused lease released while an attempt runs on it")
            return .none
        }
    }

    // MARK: Shared transitions

    /// Fails the attempt in flight; the connection closes.
    private mutating func fail(_ failure: Failure) -> Action {
        state = .closed
        readHeld = false
        timeout.disarm()
        return .failAttempt(failure)
    }

    /// Closes a connection that has no attempt in flight.
    private mutating func closeIdle() -> Action {
        state = .closed
        readHeld = false
        timeout.disarm()
        return .close
    }

    /// Arms the request timeout while the attempt waits on the upstream, disarms it otherwise.
    private mutating func updateTimeout(now: NIODeadline) {
        timeout.update(waitingOnUpstream: isWaitingOnUpstream, now: now)
    }

    /// Whether the attempt waits for the upstream to do something: a write to
    /// complete, the response head once the request is sent, the next body part
    /// while the delegate takes them. Time spent waiting on the client does not count.
    private var isWaitingOnUpstream: Bool {
        guard case .attempt(let attempt) = state else { return false }
        if attempt.outstandingWrites > 0 { return true }
        switch attempt.response {
        case .awaitingHead: return attempt.request == .sent
        case .streaming: return !readHeld
        }
    }
}
