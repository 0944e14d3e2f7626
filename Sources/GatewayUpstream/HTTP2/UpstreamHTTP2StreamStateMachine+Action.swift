import NIOCore
import NIOHTTP2

/// What ``UpstreamHTTP2StreamStateMachine`` asks of its handler, and the events that
/// end a stream from outside (a reset, an error, a close, the timer, the delegate).
extension UpstreamHTTP2StreamStateMachine {
    enum Action {
        case none
        /// Read from the stream (or send the read that was held).
        case read
        /// Hand the response head (the frame's fields) to the delegate.
        case forwardHead(hasBody: Bool)
        /// Hand the DATA frame's bytes to the delegate.
        case forwardBody
        /// Hand the trailing fields to the delegate (``responseEnd()`` follows).
        case forwardTrailers
        /// END_STREAM went out: record it.
        case requestSent
        /// The response is complete: record the end, reset the stream when the
        /// request was not all sent, free the slot, then tell the delegate.
        case finish(resetStream: Bool)
        /// The exchange failed: record it, reset the stream (if it is still
        /// open), free the slot, then tell the delegate.
        case fail(Failure)
        /// The stream closed before it opened: nothing was sent, the slot is free
        /// again and the attempt may lease another.
        case notOpened
    }

    /// Why an exchange failed; the handler turns it into a `GatewayError`.
    enum Failure {
        /// A write failed, an error came up the stream, or the delegate gave up.
        case error(any Error, beforeHead: Bool)
        /// The server reset the stream: RST_STREAM, or a GOAWAY whose last stream
        /// id is below it (REFUSED_STREAM: it was not processed).
        case reset(HTTP2ErrorCode, beforeHead: Bool)
        /// The stream (or its connection) closed under the exchange.
        case closed(beforeHead: Bool)
        case timedOut(beforeHead: Bool)
        case protocolViolation(String)
    }

    /// The answer to ``requestWrite(isEnd:now:)``.
    enum WriteDecision: Equatable {
        case write
        /// The request already ended, or the exchange is over: fail the write.
        case refuse(beforeHead: Bool)
    }

    // MARK: Events that end the stream

    /// The delegate gave up (its request body could not be read, its client left).
    mutating func abort(_ error: any Error) -> Action {
        switch state {
        case .idle: return closeUnopened()
        case .open(_, let response, _): return fail(.error(error, beforeHead: response == .awaitingHead))
        case .done: return .none
        }
    }

    /// RST_STREAM from the server (or NIOHTTP2 closing the stream with its code).
    mutating func reset(_ code: HTTP2ErrorCode) -> Action {
        switch state {
        case .idle: return closeUnopened()
        case .open(_, let response, _): return fail(.reset(code, beforeHead: response == .awaitingHead))
        case .done: return .none
        }
    }

    /// An error came up the stream's pipeline.
    mutating func errorCaught(_ error: any Error) -> Action {
        switch state {
        case .idle: return closeUnopened()
        case .open(_, let response, _): return fail(.error(error, beforeHead: response == .awaitingHead))
        case .done: return .none
        }
    }

    /// The stream's channel closed (or the handler left it).
    mutating func channelClosed() -> Action {
        switch state {
        case .idle: return closeUnopened()
        case .open(_, let response, _): return fail(.closed(beforeHead: response == .awaitingHead))
        case .done: return .none
        }
    }

    /// The timer fired: the exchange fails if the server made no progress for
    /// the timeout; otherwise the handler schedules it again for the deadline.
    mutating func timerFired(now: NIODeadline) -> Action {
        guard case .open(_, let response, _) = state, timeout.hasExpired(now: now) else { return .none }
        return fail(.timedOut(beforeHead: response == .awaitingHead))
    }
}
