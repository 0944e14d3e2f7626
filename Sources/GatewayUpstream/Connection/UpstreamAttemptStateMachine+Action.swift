import GatewayCore
import NIOCore
import NIOHTTP1

/// What ``UpstreamAttemptStateMachine`` asks its handler to do: one value per
/// event, with no closures and no arrays, so that running an attempt allocates
/// nothing here.
extension UpstreamAttemptStateMachine {
    enum Action {
        case none
        /// Let the pipeline's `read()` through (or send the one that was held).
        case read
        /// Record the status and hand the head to the delegate.
        case forwardHead(UpstreamResponseHead)
        case forwardBody(ByteBuffer)
        /// The attempt is over: record its end, release the connection (as
        /// `release` says), then hand the end to the delegate, in that order so that
        /// the delegate's next request finds the connection back in the pool.
        case forwardEnd(Release)
        /// The end of the request reached the socket: record it.
        case requestSent
        /// The attempt failed: record the failure, stop the timer, close the
        /// connection, release it as not reusable, then tell the delegate.
        case failAttempt(Failure)
        /// No attempt in flight: stop the timer and close the connection.
        case close
        /// The channel closed while idle: stop the timer.
        case stopTimer
        /// Give an unused lease back to the pool.
        case release(reusable: Bool)
        /// A handshake's 101: record it, stop the timer, take the bytes read
        /// after the head, leave the pipeline and hand the connection to the
        /// delegate as a tunnel (it is not released to the pool: it never goes back).
        case upgrade(UpstreamResponseHead)
    }

    /// What becomes of the connection when an attempt ends normally.
    enum Release: Equatable {
        /// Back to the pool; `resumeRead`: a read held for the delegate goes out.
        /// The timer task stays pending for the next attempt.
        case reuse(resumeRead: Bool)
        /// Either side asked to close, or the request was not fully sent.
        case close
    }

    /// Why an attempt failed; the handler turns it into a `GatewayError`.
    enum Failure {
        /// A write failed, the pipeline reported an error, or the delegate aborted.
        case error(any Error)
        /// The connection closed under the attempt.
        case closed(beforeHead: Bool)
        /// The request timeout ran out.
        case timedOut(beforeHead: Bool)
        case protocolViolation(ProtocolViolation)
    }

    /// A response that does not fit the attempt in flight.
    enum ProtocolViolation: Equatable {
        /// A second response head for one request.
        case secondHead
        /// A 1xx head the framer let through (a 101 that answers no handshake).
        case informational(UInt)
        /// A 101 to a WebSocket handshake that is not a valid answer to it (``WebSocketUpgrade``).
        case invalidUpgrade(String)
        case bodyBeforeHead
        case endBeforeHead
        /// The bytes read do not frame as an HTTP/1.1 response.
        case malformed(HTTP1FramingError)

        var message: String {
            switch self {
            case .secondHead: "response without a request in flight"
            case .informational(let code): "unexpected \(code) response"
            case .invalidUpgrade(let problem): problem
            case .bodyBeforeHead: "response body without a response in flight"
            case .endBeforeHead: "response end without a response in flight"
            case .malformed(let error): error.message
            }
        }
    }

    /// The answer to ``UpstreamAttemptStateMachine/startAttempt(isHEAD:keepAlive:endQueued:now:)``.
    enum StartDecision: Equatable {
        /// Write the request; the delegate's writer carries `attemptID`.
        case start(attemptID: Int)
        /// The connection closed while idle, before it was leased: nothing was sent.
        case refuseClosed
        /// An attempt is already running on it (a pool bug).
        case refuseBusy
    }

    /// The answer to ``UpstreamAttemptStateMachine/requestWrite(attemptID:isEnd:now:)``.
    enum WriteDecision: Equatable {
        /// Write it with an observed promise.
        case write
        /// The writer's attempt is over, or its request already ended: fail the write.
        case refuse(beforeHead: Bool)
    }
}
