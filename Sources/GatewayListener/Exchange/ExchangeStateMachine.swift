import GatewayCore
import NIOCore

/// The progress of one ``Exchange`` and every decision about it, without I/O:
/// which phase it is in, what another attempt may send
/// (``ExchangeResendState``: the retry state, the body's copy), what went to
/// the client, and what each event makes of them. The exchange feeds it
/// events and performs the actions it returns (``Action``: run the steps,
/// back off, wait for the body, wait for a replay, fail); the futures, timers
/// and writers those actions concern stay in the exchange. An event the phase
/// cannot have stops the process (async-http-client's `RequestBag.StateMachine`
/// is the model); late callbacks of a given-up attempt or wait are ignored.
///
/// The phases, in the order an exchange meets them: `idle` → `preparing(step:)`
/// (the route's attempt steps, from `step` on) → `waiting(step:)` (a step's
/// future) → `attempting` (no response head yet) → `responding` (the head
/// went to the client), or a detour back to `preparing(step: 0)`:
/// `discarding` (a retryable or replayed response's body), `awaitingReplay`
/// (a step's wait before a replay: a token refresh), `backingOff`,
/// `awaitingBody` / `awaitingBodyToRetry` (a body that must be whole before
/// it goes again). `finished` ends every path. The retry planner decides
/// whether and when an attempt goes again, a step whether a response asks for
/// a replay; nothing else decides outside this machine.
struct ExchangeStateMachine {
    private(set) var phase = Phase.idle
    private(set) var resend = ExchangeResendState()
    /// The status the client got (or is getting).
    private(set) var status: Int?
    /// Request body bytes the client sent; response body bytes it was sent.
    private(set) var bytesIn = 0
    private(set) var bytesOut = 0
    /// `100 Continue` went out.
    private(set) var continueSent = false
    /// Response parts written since the last flush.
    private var unflushed = false

    // MARK: Start and steps

    /// The exchange starts (see ``ExchangeResendState/init(retry:stepReplayLimit:declaredLength:bodyless:repeatable:)``).
    /// `idempotent`: the method is (RFC 9110 §9.2.2); `idempotencyKey`: the
    /// request has an `Idempotency-Key`. Either makes it one that may be sent
    /// again outside the retry policy (after a stale pooled connection).
    mutating func start(
        retry: RetryRun?, stepReplayLimit: Int?, declaredLength: Int?, bodyless: Bool, idempotent: Bool = false, idempotencyKey: Bool = false
    ) -> Action {
        guard case .idle = phase else { preconditionFailure("an exchange started in \(phase)") }
        resend = ExchangeResendState(
            retry: retry, stepReplayLimit: stepReplayLimit, declaredLength: declaredLength, bodyless: bodyless,
            repeatable: idempotent || idempotencyKey
        )
        phase = .preparing(step: 0)
        return .runSteps
    }

    mutating func stepProceeded() {
        guard case .preparing(let step) = phase else { preconditionFailure("a step proceeded in \(phase)") }
        phase = .preparing(step: step + 1)
    }

    mutating func stepWaits() {
        guard case .preparing(let step) = phase else { preconditionFailure("a step waits in \(phase)") }
        phase = .waiting(step: step)
    }

    /// A step's wait is over (`failure`: it failed, and that is the answer).
    /// `repeatStep`: the same step runs again (it waited for a condition, not
    /// for its result). An exchange no longer waiting (finished) drops it.
    mutating func stepWaitEnded(failure: (any Error)?, repeatStep: Bool) -> Action {
        guard case .waiting(let step) = phase else { return .none }
        if let failure { return .fail(GatewayError.forwarding(failure)) }
        phase = .preparing(step: repeatStep ? step : step + 1)
        return .runSteps
    }

    /// Every step proceeded: the attempt goes.
    mutating func attemptStarted() {
        guard case .preparing = phase else { preconditionFailure("an attempt started in \(phase)") }
        phase = .attempting
    }

    /// A step answered for the upstream (a local 429) with `status`.
    mutating func answeredLocally(status: Int) {
        guard case .preparing = phase else { preconditionFailure("a step answered in \(phase)") }
        phase = .finished
        self.status = status
    }

    // MARK: Request body

    /// A part of the client's body: counted, copied if it may go again; an
    /// attempt that waits for it may go.
    mutating func requestBodyPart(_ part: ByteBuffer, retryDelay: (GatewayError, inout RetryRun) -> Duration?) -> Action {
        bytesIn += part.readableBytes
        guard resend.bodyPart(part) else { return .none }
        return bodyArrived(retryDelay: retryDelay)
    }

    /// The client's body ended: an attempt that waits for it may go.
    mutating func requestEnded(retryDelay: (GatewayError, inout RetryRun) -> Duration?) -> Action {
        guard resend.bodyEnded() else { return .none }
        return bodyArrived(retryDelay: retryDelay)
    }

    private mutating func bodyArrived(retryDelay: (GatewayError, inout RetryRun) -> Duration?) -> Action {
        switch phase {
        case .awaitingBody(let limit):
            return restart(within: limit)
        case .awaitingBodyToRetry(let error):
            switch resend.retry(after: error, retryDelay: retryDelay) {
            case .after(let delay): return backOff(delay)
            case .awaitBody: return .none  // still coming
            case .no: return .fail(error)
            }
        default:
            return .none
        }
    }

    /// Whether to write `100 Continue` now: once, if the client asked and no response started.
    mutating func continueNeeded(expected: Bool) -> Bool {
        guard expected, !continueSent else { return false }
        switch phase {
        case .responding, .finished: return false
        default: break
        }
        continueSent = true
        return true
    }

    // MARK: The response

    /// The head of the attempt's response, after the steps saw it
    /// (`replayAsked`: one asked to replay the request; ``ExchangeResendState/stepsMayReplay``
    /// says whether they may); otherwise the retry planner is asked
    /// (`retryDelay`), if the body can go again. `requestSent`: the whole request went upstream.
    mutating func responseHead(replayAsked: Bool, requestSent: Bool, retryDelay: (inout RetryRun) -> Duration?) -> HeadVerdict {
        guard case .attempting = phase else { preconditionFailure("a response head in \(phase)") }
        guard let next = resend.next(afterHeadWith: replayAsked, retryDelay: retryDelay) else { return .forward }
        guard requestSent else { return .abandon(then: startNext(next)) }
        phase = .discarding(then: next)
        return .discard
    }

    /// The response head went to the client (after ``HeadVerdict/forward``). `bodyless`: its framing sends no body.
    mutating func responding(status: Int, bodyless: Bool) {
        guard case .attempting = phase else { preconditionFailure("a response head went out in \(phase)") }
        phase = .responding(bodyless: bodyless)
        self.status = status
        // Out at the end of the read that carried it: a slow first body part does not hold the status back.
        unflushed = true
    }

    /// A part of the response body; true: write it to the client.
    mutating func responseBodyPart(_ count: Int) -> Bool {
        guard case .responding(bodyless: false) = phase else { return false }
        bytesOut += count
        unflushed = true
        return true
    }

    /// True when parts were written since the last flush (they are flushed now).
    mutating func takeUnflushed() -> Bool {
        defer { unflushed = false }
        return unflushed
    }

    mutating func responseEnded() -> End {
        switch phase {
        case .discarding(let next):
            return .next(startNext(next))
        case .responding:
            phase = .finished
            return .finish
        default:
            return .ignore
        }
    }

    /// The upstream answered the handshake with 101; false when no attempt was in flight.
    mutating func upgraded(status: Int) -> Bool {
        guard isAttempting else { return false }
        phase = .finished
        self.status = status
        return true
    }

    // MARK: Failures and waits

    /// The upstream failed: before the head, the attempt is sent again at once
    /// on a new connection when a stale pooled one failed it, retried (now,
    /// after a backoff, once the body is in) or its error is the answer; a turned-down
    /// response that did not end cleanly lets the next attempt go anyway;
    /// mid-response, the exchange fails. Also the attempt's timeout.
    mutating func upstreamFailed(_ error: any Error, retryDelay: (GatewayError, inout RetryRun) -> Duration?) -> Action {
        switch phase {
        case .attempting:
            guard let gatewayError = error as? GatewayError else { return .fail(GatewayError.forwarding(error)) }
            if resend.resendsAfterStale(gatewayError) { return restart(within: resend.retryLimit) }
            switch resend.retry(after: gatewayError, retryDelay: retryDelay) {
            case .after(let delay):
                return backOff(delay)
            case .awaitBody:
                phase = .awaitingBodyToRetry(after: gatewayError)
                return .awaitBody
            case .no:
                return .fail(gatewayError)
            }
        case .discarding(let next):
            return startNext(next)
        case .responding:
            return .fail(GatewayError.forwarding(error))
        default:
            return .none
        }
    }

    /// The backoff is over: the next attempt (or a wait for the body). Dropped when the exchange moved on.
    mutating func backoffEnded() -> Action {
        guard case .backingOff = phase else { return .none }
        return restart(within: resend.retryLimit)
    }

    /// The step's replay wait is over (`failure`: it failed, and that is the answer).
    mutating func replayWaitEnded(failure: (any Error)?) -> Action {
        guard case .awaitingReplay = phase else { return .none }
        if let failure { return .fail(GatewayError.forwarding(failure)) }
        return restart(within: resend.replayLimit)
    }

    /// The exchange fails with `error`: finished, and how the client learns it
    /// (`injectedReset`: a fault toward the app resets the client's connection).
    /// Nil when it had finished already.
    mutating func failed(_ error: GatewayError, injectedReset: Bool) -> Failure? {
        switch phase {
        case .finished:
            return nil
        case .responding:
            phase = .finished
            return .abort
        default:
            phase = .finished
            if injectedReset { return .abort }
            status = Int(error.status.code)
            return .respond(status: Int(error.status.code))
        }
    }

    /// The client went away: the exchange is finished; returns what was pending
    /// (a wait, a backoff) for the exchange to withdraw, nil when it had finished.
    mutating func cancel() -> Phase? {
        guard !isFinished else { return nil }
        defer { phase = .finished }
        return phase
    }

    // MARK: Private

    private mutating func startNext(_ next: Next) -> Action {
        switch next {
        case .after(let delay):
            return backOff(delay)
        case .replay:
            phase = .awaitingReplay
            return .awaitReplay
        }
    }

    private mutating func backOff(_ delay: Duration) -> Action {
        guard delay > .zero else { return restart(within: resend.retryLimit) }
        phase = .backingOff
        return .backOff(delay)
    }

    /// The next attempt: every step again, on the request as routed carrying
    /// the body's copy; first a wait for the rest of the body if it is still coming.
    private mutating func restart(within limit: Int) -> Action {
        switch resend.restart(within: limit) {
        case .send(let request):
            phase = .preparing(step: 0)
            return .runAttempt(from: request)
        case .awaitBody:
            if case .awaitingBody = phase { return .none }  // still waiting
            phase = .awaitingBody(within: limit)
            return .awaitBody
        case .unavailable:
            return .fail(resend.unavailableError)
        }
    }
}
