import GatewayCore
import NIOCore
import NIOHTTP2

/// One HTTP/2 stream's exchange, without I/O: how far the request has been
/// written and the response read, whether a read is held for a slow consumer,
/// and the request timeout's clock. ``UpstreamHTTP2StreamHandler`` feeds it events and
/// performs the single ``Action`` each returns (as ``UpstreamAttemptStateMachine``
/// does for an HTTP/1.1 connection; a stream carries one exchange, so there is
/// no reuse to decide). The actions are in `+Action.swift`.
struct UpstreamHTTP2StreamStateMachine {
    enum RequestPhase: Equatable {
        /// HEADERS are written; the delegate streams the body.
        case streaming
        /// The end of the request (END_STREAM) is queued, its write not yet confirmed.
        case endQueued
        case sent
    }

    enum ResponsePhase: Equatable {
        /// Interim (1xx) heads are skipped meanwhile.
        case awaitingHead
        /// DATA goes to the delegate when the head said a body follows.
        case streaming(hasBody: Bool)
        /// Trailing HEADERS came (END_STREAM is on them).
        case trailers
    }

    enum State: Equatable {
        /// The stream is not open yet.
        case idle
        case open(request: RequestPhase, response: ResponsePhase, outstandingWrites: Int)
        /// The response ended, or the exchange failed.
        case done
    }

    private(set) var state = State.idle
    /// A read is held back because the delegate cannot take more.
    private(set) var readHeld = false
    private(set) var timeout: UpstreamRequestTimeout
    let isHEAD: Bool
    /// What the response's `content-length` still promises (none for a
    /// bodyless response: a HEAD's or a 304's length describes a body not
    /// sent). DATA beyond it, or an end short of it, is a malformed response.
    private(set) var responseLength = HTTP2DeclaredLength(nil)

    init(requestTimeout: TimeAmount, isHEAD: Bool) {
        self.timeout = UpstreamRequestTimeout(timeout: requestTimeout)
        self.isHEAD = isHEAD
    }

    var isAwaitingHead: Bool {
        if case .open(_, .awaitingHead, _) = state { return true }
        return false
    }

    /// Whether a response is being streamed: only then may the delegate pause reads.
    var isStreamingResponse: Bool {
        if case .open(_, .streaming, _) = state { return true }
        return false
    }

    var isDone: Bool { state == .done }

    // MARK: Request side

    /// The stream is open and its HEADERS written (observed): with the whole
    /// request (`endQueued`: no body, or a buffered one in the same flush), or
    /// with the body to come from the delegate.
    mutating func start(endQueued: Bool, now: NIODeadline) {
        guard case .idle = state else { return }
        state = .open(request: endQueued ? .endQueued : .streaming, response: .awaitingHead, outstandingWrites: 1)
        updateTimeout(now: now)
    }

    /// The delegate writes a chunk of its body (`isEnd`: with END_STREAM).
    mutating func requestWrite(isEnd: Bool, now: NIODeadline) -> WriteDecision {
        guard case .open(var request, let response, var writes) = state else { return .refuse(beforeHead: false) }
        guard request == .streaming else { return .refuse(beforeHead: response == .awaitingHead) }
        writes += 1
        if isEnd { request = .endQueued }
        state = .open(request: request, response: response, outstandingWrites: writes)
        updateTimeout(now: now)
        return .write
    }

    /// An observed write went out (`isEnd`: the one with END_STREAM).
    mutating func writeSucceeded(isEnd: Bool, now: NIODeadline) -> Action {
        guard case .open(var request, let response, var writes) = state, writes > 0 else { return .none }
        writes -= 1
        timeout.progress(now: now)
        var action = Action.none
        if isEnd, request == .endQueued {
            request = .sent
            action = .requestSent
        }
        state = .open(request: request, response: response, outstandingWrites: writes)
        updateTimeout(now: now)
        return action
    }

    /// A write failed (the stream or the connection is gone), or the delegate gave up.
    mutating func writeFailed(_ error: any Error) -> Action {
        guard case .open(_, let response, _) = state else { return .none }
        return fail(.error(error, beforeHead: response == .awaitingHead))
    }

    // MARK: Response side

    /// A response HEADERS while awaiting the head: `status` its `:status` (nil
    /// when missing or malformed), `declaredLength` its `content-length`.
    /// Interim 1xx heads are skipped; a final one is forwarded, with whether a
    /// body follows. When END_STREAM is on it, ``responseEnd()`` follows.
    mutating func responseHead(status: UInt?, declaredLength: Int?, endStream: Bool, now: NIODeadline) -> Action {
        guard case .open(let request, .awaitingHead, let writes) = state else {
            return state == .done ? .none : fail(.protocolViolation("a second response head"))
        }
        guard let status, (100...599).contains(status) else { return fail(.protocolViolation("a response without a valid :status")) }
        timeout.progress(now: now)
        if status < 200 {
            // RFC 9113 §8.1: interim responses; 101 has no meaning in HTTP/2.
            guard status != 101, !endStream else { return fail(.protocolViolation("an unexpected \(status) response")) }
            return .none
        }
        let bodyless = isHEAD || status == 204 || status == 304
        responseLength = HTTP2DeclaredLength(bodyless ? nil : declaredLength)
        if endStream, !responseLength.mayEnd { return failShort() }
        let hasBody = !(endStream || bodyless || declaredLength == 0)
        state = .open(request: request, response: .streaming(hasBody: hasBody), outstandingWrites: writes)
        updateTimeout(now: now)
        return .forwardHead(hasBody: hasBody)
    }

    /// A HEADERS frame (head or trailers) with a field HTTP/1.1 cannot carry.
    mutating func malformedFields(_ problem: String) -> Action {
        guard case .open = state else { return .none }
        return fail(.protocolViolation("a response field \(problem)"))
    }

    /// HEADERS after the head: trailers, which must end the stream.
    mutating func responseTrailers(endStream: Bool) -> Action {
        guard case .open(let request, .streaming, let writes) = state else {
            return state == .done ? .none : fail(.protocolViolation("trailers without a response in flight"))
        }
        guard endStream else { return fail(.protocolViolation("trailers that do not end the stream")) }
        state = .open(request: request, response: .trailers, outstandingWrites: writes)
        return .forwardTrailers
    }

    /// A DATA frame of `length` bytes (its padding not counted).
    mutating func responseData(length: Int, now: NIODeadline) -> Action {
        guard case .open(_, let response, _) = state else { return .none }
        switch response {
        case .awaitingHead: return fail(.protocolViolation("a response body before its head"))
        case .trailers: return fail(.protocolViolation("a response body after its trailers"))
        case .streaming(let hasBody):
            guard responseLength.received(length) else { return fail(.protocolViolation("a response body longer than its content-length")) }
            timeout.progress(now: now)
            // A body a bodyless response should not have (HEAD, 204, 304) is dropped.
            return hasBody ? .forwardBody : .none
        }
    }

    /// END_STREAM from the server: the response is complete. If the request is
    /// not all sent, the server wants no more of it: the stream is reset.
    mutating func responseEnd() -> Action {
        guard case .open(let request, let response, _) = state else { return .none }
        guard response != .awaitingHead else { return fail(.protocolViolation("the stream ended before a final response")) }
        guard responseLength.mayEnd else { return failShort() }
        state = .done
        readHeld = false
        timeout.disarm()
        return .finish(resetStream: request != .sent)
    }

    // MARK: Reads

    /// The handler wants to read. `consumerPaused`: the delegate cannot take more
    /// (asked only while ``isStreamingResponse``); the read is then held.
    mutating func readRequested(consumerPaused: Bool) -> Action {
        guard case .open = state else { return .none }
        guard consumerPaused, isStreamingResponse else { return .read }
        readHeld = true
        if !isWaitingOnUpstream { timeout.disarm() }
        return .none
    }

    /// The delegate can take more: a held read goes out.
    mutating func consumerDemand(now: NIODeadline) -> Action {
        guard readHeld, case .open = state else { return .none }
        readHeld = false
        updateTimeout(now: now)
        return .read
    }

    // MARK: Shared transitions

    /// The stream closed (or failed) before it opened.
    mutating func closeUnopened() -> Action {
        state = .done
        return .notOpened
    }

    /// The response ended before the bytes its `content-length` promised.
    private mutating func failShort() -> Action {
        fail(.protocolViolation("a response that ended \(responseLength.left ?? 0) bytes short of its content-length"))
    }

    mutating func fail(_ failure: Failure) -> Action {
        state = .done
        readHeld = false
        timeout.disarm()
        return .fail(failure)
    }

    mutating func updateTimeout(now: NIODeadline) {
        timeout.update(waitingOnUpstream: isWaitingOnUpstream, now: now)
    }

    /// Whether the exchange waits for the server: a write to go out, the head
    /// once the request is sent, the next body part while the delegate takes them.
    private var isWaitingOnUpstream: Bool {
        guard case .open(let request, let response, let writes) = state else { return false }
        if writes > 0 { return true }
        switch response {
        case .awaitingHead: return request == .sent
        case .streaming, .trailers: return !readHeld
        }
    }
}
