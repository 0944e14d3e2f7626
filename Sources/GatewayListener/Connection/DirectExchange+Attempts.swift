import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// The attempts of a direct exchange: the steps before each one (which may
/// answer, or wait), the attempt itself under `per_try_timeout` and the
/// request's deadline, and the retry planner's verdict after a failure or a
/// retryable status, with the backoff as a scheduled task on the loop.
extension DirectExchange {
    /// - Parameter plan: the route's retry planner's `begin` for this request.
    func start(_ plan: RetryPlan) {
        if case .retrying(let run) = plan { retryRun = run }
        keepBodyCopyIfReplayable()
        prepareAttempt()
    }

    /// Runs the steps from `nextStep` on; sends the attempt when all proceeded.
    func prepareAttempt() {
        phase = .preparing
        let steps = route.steps
        while nextStep < steps.count {
            switch steps[nextStep].prepare(&request, context: info.context, on: eventLoop) {
            case .proceed:
                nextStep += 1
            case .respond(let response):
                return respondLocally(response)
            case .wait(let wait):
                phase = .waiting(wait)
                wait.future.assumeIsolated().whenComplete { result in
                    guard case .waiting = self.phase else { return }
                    switch result {
                    case .success(let edit):
                        edit?(&self.request)
                        if !wait.repeatStep { self.nextStep += 1 }
                        self.prepareAttempt()
                    case .failure(let error):
                        self.fail(error)
                    }
                }
                return
            }
        }
        send()
    }

    private func send() {
        phase = .attempting
        let delegate: any UpstreamExchangeDelegate
        if retryRun != nil || replayBuffer != nil {
            let forwarder = AttemptDelegate(self)
            attemptDelegate = forwarder
            delegate = forwarder
        } else {
            delegate = self
        }
        armAttemptTimerOnceRequestIsIn()
        cancellation = transport.startExchange(request, record: info.context.record, on: eventLoop, delegate: delegate)
    }

    /// Arms the attempt's timer once the client's whole request is in: a body
    /// still coming from the client (streamed to the first attempt) is not the
    /// upstream's time, as it was not when bodies were buffered before the
    /// first attempt. (An upstream that stops taking the body meanwhile is the
    /// pool's `request_timeout`'s.)
    func armAttemptTimerOnceRequestIsIn() {
        guard let run = retryRun, attemptTimer == nil, case .attempting = phase, routed.bodyLengthIsZero || body.requestEnded else { return }
        armAttemptTimer(run)
    }

    /// The attempt in flight failed before its response head: retried, or the client gets the error.
    func attemptFailed(_ error: any Error) {
        writer = nil
        attemptTimer?.cancel()
        attemptTimer = nil
        if let run = retryRun, let gatewayError = error as? GatewayError, canResend(within: run.bodyLimit, certain: false) {
            guard canResend(within: run.bodyLimit, certain: true) else {
                detachAttempt()
                phase = .awaitingBodyToRetry(after: gatewayError)
                return sendContinueIfAwaited()
            }
            if let delay = retryDelay(after: gatewayError) {
                lastFailure = error
                return backOff(delay)
            }
        }
        fail(error)
    }

    /// The body an attempt failed during is all in its copy (retried if the
    /// planner says so), or it outgrew the copy (the failure is the answer).
    func decideRetryOnceBodyIsIn(after error: GatewayError) {
        guard let run = retryRun else { return fail(error) }
        if canResend(within: run.bodyLimit, certain: true) {
            guard let delay = retryDelay(after: error) else { return fail(error) }
            return backOff(delay)
        }
        if !canResend(within: run.bodyLimit, certain: false) { fail(error) }
    }

    func retryDelay(after error: GatewayError) -> Duration? {
        guard let planner = route.retry, var run = retryRun else { return nil }
        let delay = planner.retry(after: error, run: &run, context: info.context)
        retryRun = run
        return delay
    }

    func retryDelay(afterStatus status: HTTPResponseStatus, headers: HTTPHeaders) -> Duration? {
        guard let planner = route.retry, var run = retryRun else { return nil }
        let delay = planner.retry(afterStatus: status, headers: headers, run: &run, context: info.context)
        retryRun = run
        return delay
    }

    /// After a response head: what the steps (a 401 to a token) and then the
    /// retry planner (a retryable status) make of it. Every step sees the head;
    /// a step's replay comes first, once per request, and only if the body
    /// (if any) is or will surely be all in its copy: a response is never
    /// turned down for a body that might not be sent again.
    func nextAttempt(after head: UpstreamResponseHead) -> NextAttempt? {
        var replay: AttemptWait?
        let bodyMayGoAgain = canResend(within: replayBuffer?.limit ?? 0, certain: true)
        for step in route.steps {
            let mayReplay = replay == nil && !replayedByStep && bodyMayGoAgain
            if case .replay(let wait) = step.responseHead(head, of: request, context: info.context, mayReplay: mayReplay, on: eventLoop) {
                replay = wait
            }
        }
        if let replay {
            replayedByStep = true
            return .replay(replay)
        }
        // The fields are made `HTTPHeaders` only for a status the planner may retry.
        if let run = retryRun, route.retry?.considers(status: head.status) == true, canResend(within: run.bodyLimit, certain: true),
            let delay = retryDelay(afterStatus: head.status, headers: head.headers)
        {
            return .after(delay)
        }
        return nil
    }

    func startNext(_ next: NextAttempt) {
        switch next {
        case .after(let delay):
            backOff(delay)
        case .replay(let wait):
            detachAttempt()
            phase = .waiting(wait)
            wait.future.assumeIsolated().whenComplete { result in
                guard case .waiting = self.phase else { return }
                switch result {
                case .success: self.restartAttempts(within: self.replayBuffer?.limit ?? 0)
                case .failure(let error): self.fail(error)
                }
            }
        }
    }

    /// Sleeps `delay`, then the next attempt runs every step again (a fresh copy of the routed request).
    func backOff(_ delay: Duration) {
        detachAttempt()
        let limit = retryRun?.bodyLimit ?? 0
        guard delay > .zero else { return restartAttempts(within: limit) }
        let scheduled = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
            guard case .backingOff = self.phase else { return }
            self.restartAttempts(within: limit)
        }
        phase = .backingOff(scheduled)
    }

    /// The attempt is given up (its response discarded, or it failed): its
    /// callbacks are cut off, and the body goes to it no more.
    private func detachAttempt() {
        attemptDelegate?.detach()
        attemptDelegate = nil
        cancellation = nil
        body.detach()
        handler.resumeReading()  // the rest of a body goes to its copy now
    }

    /// A step answered for the upstream (a local 429): the response goes to the
    /// client with `Via`, and the connection stays open.
    private func respondLocally(_ response: ProxyResponse) {
        phase = .finished
        releaseUpstream()
        let code = Int(response.status.code)
        status = code
        log(status: code, error: nil)
        let written = handler.respond(response, info: info, addVia: true)
        info.finish(ExchangeOutcome(status: code, responseBytes: written, error: nil))
    }

    /// Stops whatever is under way (a wait, a backoff, an attempt): the client
    /// went away or a limit passed. An attempt's writer is aborted, which closes
    /// its connection.
    func abandonAttempt(_ error: any Error) {
        let current = phase
        // Callbacks the abort causes find no attempt in flight.
        phase = .preparing
        switch current {
        case .waiting(let wait), .discarding(then: .replay(let wait)):
            wait.cancel()
        case .backingOff(let scheduled):
            scheduled.cancel()
        default:
            break
        }
        attemptDelegate?.detach()
        attemptDelegate = nil
        cancellation?.cancel()
        cancellation = nil
        writer?.abort(error)
        writer = nil
        attemptTimer?.cancel()
        attemptTimer = nil
    }

    /// `per_try_timeout` from now (the client's whole request is in), or the
    /// request's deadline if sooner: the attempt is abandoned and counts as a
    /// `request_timeout` failure.
    private func armAttemptTimer(_ run: RetryRun) {
        let now = ContinuousClock.now
        // Which limit comes first; its message is only made if it fires.
        var limit: (at: ContinuousClock.Instant, perTry: Duration?)?
        if let perTry = run.perTryTimeout {
            limit = (now + perTry, perTry)
        }
        if let deadline = run.deadline, limit.map({ deadline < $0.at }) ?? true {
            limit = (deadline, nil)
        }
        guard let limit else { return }
        attemptTimer = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limit.at - now)) {
            guard case .attempting = self.phase else { return }
            let message = limit.perTry.map { "no response from the upstream within per_try_timeout (\(ConfigUnits.formatDuration($0)))" }
                ?? "the request's deadline passed before the upstream answered"
            let error = GatewayError(.requestTimeout, message, upstream: self.request.hostPort)
            self.abandonAttempt(error)
            self.attemptFailed(error)
        }
    }
}
