import GatewayCore
import NIOCore

/// The vocabulary of ``ExchangeStateMachine``: its phases, and what its events return.
extension ExchangeStateMachine {
    /// When the attempt after a turned-down response goes.
    enum Next: Equatable {
        /// After the retry planner's backoff.
        case after(Duration)
        /// Once a step's wait (a token refresh after a 401) is over.
        case replay
    }

    enum Phase {
        case idle
        case preparing(step: Int)
        case waiting(step: Int)
        case attempting
        case discarding(then: Next)
        /// A step's replay wait (the 401's token refresh) before the next attempt.
        case awaitingReplay
        case backingOff
        /// The next attempt sends the body again (bodies up to `within` bytes) once it is all in.
        case awaitingBody(within: Int)
        /// An attempt failed while a body that may outgrow its copy was still
        /// coming: whether to retry is decided once it is in.
        case awaitingBodyToRetry(after: GatewayError)
        /// The head went to the client; `bodyless`: no body goes after it (HEAD, 204, 304).
        case responding(bodyless: Bool)
        case finished
    }

    /// The request a new attempt sends.
    enum AttemptRequest: Equatable {
        /// The request as routed again (it has no body).
        case routed
        /// The request as routed again, with the whole copy of its body, in one write.
        case routedWithBody(ByteBuffer)
    }

    /// What the exchange does after an event.
    enum Action {
        case none
        /// Run the route's steps from the current one, then the attempt.
        case runSteps
        /// Give the attempt in flight up (if any), then run every step again on `from`.
        case runAttempt(from: AttemptRequest)
        /// Give the attempt up; after `Duration` (``backoffEnded()``) the next one goes.
        case backOff(Duration)
        /// Give the attempt up and wait for the rest of the client's body
        /// (`100 Continue` first, if the client waits for it).
        case awaitBody
        /// Give the attempt up and wait for the step's replay wait (``replayWaitEnded(failure:)``).
        case awaitReplay
        /// The exchange fails: ``failed(_:injectedReset:)`` says how the client learns it.
        case fail(GatewayError)
    }

    /// What becomes of a response head (``responseHead(replayAsked:requestSent:retryDelay:)``).
    enum HeadVerdict {
        /// The response goes to the client (then ``responding(status:bodyless:)``).
        case forward
        /// Turned down: its body is read to the end and dropped, then the next attempt (``responseEnded()``).
        case discard
        /// Turned down before the whole request went: the attempt is aborted (its
        /// connection cannot be reused), then `then`.
        case abandon(then: Action)
    }

    /// How the client learns that the exchange failed.
    enum Failure: Equatable {
        /// A gateway error response with this status.
        case respond(status: Int)
        /// The response is cut short (it started), or the connection reset (an injected fault).
        case abort
    }

    enum End {
        /// The response is over: log, finish the observers, end the client's response.
        case finish
        /// A turned-down response's body is over: the next attempt.
        case next(Action)
        case ignore
    }
}

extension ExchangeStateMachine.Action: Equatable {
    /// Failures compare by code and message (``GatewayError`` is not `Equatable`).
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.none, .none), (.runSteps, .runSteps), (.awaitBody, .awaitBody), (.awaitReplay, .awaitReplay):
            return true
        case (.runAttempt(let a), .runAttempt(let b)):
            return a == b
        case (.backOff(let a), .backOff(let b)):
            return a == b
        case (.fail(let a), .fail(let b)):
            return a.code == b.code && a.message == b.message
        default:
            return false
        }
    }
}

extension ExchangeStateMachine.HeadVerdict: Equatable {}

extension ExchangeStateMachine.End: Equatable {}

extension GatewayError {
    /// `error` as the exchange reports it: a gateway error as it is, anything else as an internal error.
    static func forwarding(_ error: any Error) -> GatewayError {
        (error as? GatewayError) ?? GatewayError(.internalError, "the gateway failed to forward the request", cause: error)
    }
}
