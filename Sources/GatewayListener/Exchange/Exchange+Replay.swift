import GatewayCore
import NIOCore
import NIOHTTP1

/// Sending a request body more than once: a retry, or a step's replay after a
/// 401. The first attempt streams the body as it arrives, and the exchange
/// keeps a copy of it (``RequestReplayBuffer``) up to the largest limit that
/// applies: the retry planner's (`retry.buffer_limit`) and the steps' (the
/// OAuth2 replay limit). A later attempt sends the copy in one write, once the
/// client's whole body is in.
///
/// What may be sent again: a retry needs the body within `buffer_limit`; a
/// step's replay needs it within the larger limit.
/// A response is turned down (discarded, for a retry or a replay) only if the
/// body is, or will surely be, all in its copy (it is complete, or its
/// declared length fits); a failed attempt, which has no response to give
/// instead, may also wait for a chunked body, and if that outgrows the limit,
/// its failure is the client's answer (the retry is decided, and taken from
/// the budget, only once the body is all in its copy). An attempt answered before its whole
/// body went is given up at once (its connection could not be reused).
extension Exchange {
    /// Starts the copy of the body when it may be sent again and may fit.
    /// Called as the exchange starts, before any step ran: `request` is still as routed.
    func keepBodyCopyIfReplayable() {
        guard !request.bodyLengthIsZero else { return }
        var limit = retryRun?.bodyLimit
        for step in route.steps {
            if let stepLimit = step.replayLimit(for: request) { limit = max(limit ?? 0, stepLimit) }
        }
        guard let limit else { return }
        if let declared = request.body.declaredLength, declared > limit { return }
        replayBuffer = RequestReplayBuffer(limit: limit, declaredLength: request.body.declaredLength)
    }

    /// Whether another attempt allowing bodies up to `limit` bytes can send
    /// the request: it has no body, or its copy is (`certain`: or surely will
    /// be; otherwise: or may still be) all of it within `limit`.
    func canResend(within limit: Int, certain: Bool) -> Bool {
        guard let replayBuffer else { return routedBodyLengthIsZero }
        let availability = replayBuffer.availability(within: limit)
        return certain ? availability.isCertain : availability.isPossible
    }

    /// The next attempt: every step again, on a fresh copy of the routed
    /// request carrying the body's copy; it waits for the rest of the body
    /// first if the client is still sending it.
    func restartAttempts(within limit: Int) {
        // Only a retry or a step's replay starts attempts again: their routes keep the routed request apart.
        assert(!route.steps.isEmpty || route.retry != nil, "attempts restarted on a route that cannot change its request")
        request = routed
        if let replayBuffer {
            switch replayBuffer.availability(within: limit) {
            case .ready(let copy):
                request.body = .bytes(copy)
            case .coming, .unknown:
                machine.awaitBody(within: limit)
                // The client may wait for this before it sends the body.
                return sendContinueIfAwaited()
            case .unavailable:
                // A chunked body outgrew the limit: it cannot go again.
                return fail(lastFailure ?? GatewayError(.bodyTooLarge, "the request body is over the limit for sending it again"))
            }
        }
        machine.restartSteps()
        prepareAttempt()
    }

    /// A part or the end of the client's body came: an attempt waiting for it may go.
    func bodyArrived() {
        switch machine.bodyArrived() {
        case .restartAttempts(let limit): restartAttempts(within: limit)
        case .decideRetry(let error): decideRetryOnceBodyIsIn(after: error)
        case .none: return
        }
    }

    /// Writes `100 Continue` once, if the client asked for it and no response started.
    func sendContinueIfAwaited() {
        guard machine.continueNeeded(expected: info.expectsContinue, responseStarted: client.responseStarted) else { return }
        client.writeContinue(info: info)
    }
}
