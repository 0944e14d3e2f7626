import GatewayConfig
import GatewayCore
import NIOCore

/// The exchange as the executor of its machine's actions
/// (``ExchangeStateMachine/Action``): the attempts given up, the backoff
/// scheduled, the waits hooked, the failure written. Nothing here decides.
extension Exchange {
    func perform(_ action: ExchangeStateMachine.Action) {
        switch action {
        case .none:
            return
        case .runSteps:
            prepareAttempt()
        case .runAttempt(let from):
            detachAttempt()
            request = routed
            if case .routedWithBody(let copy) = from { request.body = .bytes(copy) }
            prepareAttempt()
        case .backOff(let delay):
            detachAttempt()
            backoff = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
                self.backoff = nil
                self.perform(self.machine.backoffEnded())
            }
        case .awaitBody:
            detachAttempt()
            // The client may wait for this before it sends the body.
            sendContinueIfAwaited()
        case .awaitReplay:
            detachAttempt()
            guard let wait = pendingWait else {
                assertionFailure("a replay awaited without its wait")
                return perform(machine.replayWaitEnded(failure: nil))
            }
            wait.future.assumeIsolated().whenComplete { result in
                let action = self.machine.replayWaitEnded(failure: result.failureOrNil)
                guard action != .none else { return }
                self.pendingWait = nil
                self.perform(action)
            }
        case .fail(let error):
            fail(error)
        }
    }

    /// The attempt is given up (its response discarded, or it failed): its
    /// callbacks are cut off, and the body goes to it no more.
    private func detachAttempt() {
        attemptTimer?.cancel()
        attemptTimer = nil
        writer = nil
        attemptDelegate?.detach()
        attemptDelegate = nil
        cancellation = nil
        guard !body.detached else { return }
        body.detach()
        client.requestBodyDemand()  // the rest of a body goes to its copy now
    }

    /// Stops the attempt in flight (a timeout, the client gone, a response
    /// before the whole body went): its writer is aborted, which closes its connection.
    func abortAttempt(_ error: any Error) {
        attemptDelegate?.detach()
        attemptDelegate = nil
        cancellation?.cancel()
        cancellation = nil
        writer?.abort(error)
        writer = nil
        attemptTimer?.cancel()
        attemptTimer = nil
    }

    /// Withdraws what a cancelled exchange was waiting for (``ExchangeStateMachine/cancel()``).
    func withdraw(_ pending: ExchangeStateMachine.Phase) {
        switch pending {
        case .waiting, .awaitingReplay, .discarding(then: .replay):
            pendingWait?.cancel()
            pendingWait = nil
        case .backingOff:
            backoff?.cancel()
            backoff = nil
        default:
            break
        }
    }

    /// The exchange ends with `error`: a gateway error response, or, once the
    /// response started, a response cut short (as the machine says).
    func fail(_ error: GatewayError) {
        guard let failure = machine.failed(error, injectedReset: isInjectedReset(error)) else { return }
        assert((failure == .abort) == (client.responseStarted || isInjectedReset(error)), "the machine and the client disagree on what the client was sent")
        releaseUpstream()
        if error.code == .internalError {
            info.logger.error("forwarding failed", metadata: ["error": "\(error)"])
        }
        switch failure {
        case .abort:
            info.logger.info("\(LoggedText.text(of: info.method)) \(LoggedText.loggedTarget(routed.url)) aborted: \(error.code.rawValue)")
            info.finish(ExchangeOutcome(status: machine.status, responseBytes: machine.bytesOut, error: error.code))
            // Parts this read already gave go out before the close (a close drops unflushed writes).
            if machine.takeUnflushed() { client.flushResponse() }
            client.abortResponse()
        case .respond(let status):
            log(status: status, error: error.code)
            let response = error.response()
            info.observeResponseHead(status: response.status, fields: ResponseFields(response.headers), via: RequestRouter.responseVia)
            info.finish(ExchangeOutcome(status: status, responseBytes: 0, error: error.code))
            client.respond(response, info: info, addVia: true, keepAlive: false)
        }
    }

    /// A fault toward the app that resets the client's connection (issue 55):
    /// the client gets no response, as from an upstream that hung up.
    private func isInjectedReset(_ error: GatewayError) -> Bool {
        guard error.code == .connectionReset, let injected = info.context.record.injectedResponse else { return false }
        return injected.kind == "reset" && injected.toward == FaultTarget.app.rawValue
    }

    /// Writes `100 Continue` once, if the client asked for it and no response started.
    func sendContinueIfAwaited() {
        guard machine.continueNeeded(expected: info.expectsContinue) else { return }
        client.writeContinue(info: info)
    }
}
