import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// The attempts of an exchange: the steps before each one (which may answer,
/// or wait), the attempt itself under `per_try_timeout` and the request's
/// deadline, and the retry planner's verdict after a failure or a retryable
/// status, with the backoff as a scheduled task on the loop.
extension Exchange {
    /// - Parameter plan: the route's retry planner's `begin` for this request.
    func start(_ plan: RetryPlan) {
        if case .retrying(let run) = plan { retryRun = run }
        keepBodyCopyIfReplayable()
        machine.restartSteps()
        prepareAttempt()
    }

    /// Runs the steps from the machine's current one on; sends the attempt when all proceeded.
    func prepareAttempt() {
        let steps = route.steps
        while let index = machine.currentStep, index < steps.count {
            switch steps[index].prepare(&request, context: info.context, on: eventLoop) {
            case .proceed:
                machine.stepProceeded()
            case .respond(let response):
                return respondLocally(response)
            case .wait(let wait):
                machine.stepWaits()
                pendingWait = wait
                wait.future.assumeIsolated().whenComplete { result in
                    guard self.machine.waitEnded(repeatStep: wait.repeatStep) else { return }
                    self.pendingWait = nil
                    switch result {
                    case .success(let edit):
                        edit?(&self.request)
                        self.prepareAttempt()
                    case .failure(let error):
                        self.fail(error)
                    }
                }
                return
            }
        }
        guard machine.currentStep != nil else { return }
        send()
    }

    private func send() {
        machine.attemptStarted()
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
    /// upstream's time. (An upstream that stops taking the body meanwhile is
    /// the pool's `request_timeout`'s.)
    func armAttemptTimerOnceRequestIsIn() {
        guard let run = retryRun, attemptTimer == nil, machine.isAttempting, routedBodyLengthIsZero || body.requestEnded else { return }
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
                machine.awaitBodyToRetry(after: gatewayError)
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
    /// retry planner (a retryable status) make of it, and whether a step asked.
    /// Every step sees the head; a step's replay comes first, once per request,
    /// and only if the body (if any) is or will surely be all in its copy: a
    /// response is never turned down for a body that might not be sent again.
    func nextAttempt(after head: UpstreamResponseHead) -> (ExchangeStateMachine.Next, byStep: Bool)? {
        var replay: AttemptWait?
        let bodyMayGoAgain = !route.steps.isEmpty && canResend(within: replayBuffer?.limit ?? 0, certain: true)
        for step in route.steps {
            let mayReplay = replay == nil && !machine.replayedByStep && bodyMayGoAgain
            if case .replay(let wait) = step.responseHead(head, of: request, context: info.context, mayReplay: mayReplay, on: eventLoop) {
                replay = wait
            }
        }
        if let replay {
            pendingWait = replay
            return (.replay, true)
        }
        // The fields are made `HTTPHeaders` only for a status the planner may retry.
        if let run = retryRun, route.retry?.considers(status: head.status) == true, canResend(within: run.bodyLimit, certain: true),
            let delay = retryDelay(afterStatus: head.status, headers: head.headers)
        {
            return (.after(delay), false)
        }
        return nil
    }

    func startNext(_ next: ExchangeStateMachine.Next) {
        switch next {
        case .after(let delay):
            backOff(delay)
        case .replay:
            detachAttempt()
            guard let wait = pendingWait else { return restartAttempts(within: replayBuffer?.limit ?? 0) }
            machine.awaitReplay()
            wait.future.assumeIsolated().whenComplete { result in
                guard self.machine.replayWaitEnded() else { return }
                self.pendingWait = nil
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
        machine.backingOff()
        backoff = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) {
            guard self.machine.backoffEnded() else { return }
            self.backoff = nil
            self.restartAttempts(within: limit)
        }
    }

    /// The attempt is given up (its response discarded, or it failed): its
    /// callbacks are cut off, and the body goes to it no more.
    private func detachAttempt() {
        attemptDelegate?.detach()
        attemptDelegate = nil
        cancellation = nil
        body.detach()
        client.requestBodyDemand()  // the rest of a body goes to its copy now
    }

    /// A step answered for the upstream (a local 429): the response goes to the
    /// client with `Via`, and the connection stays open.
    private func respondLocally(_ response: ProxyResponse) {
        let code = Int(response.status.code)
        machine.answeredLocally(status: code)
        releaseUpstream()
        log(status: code, error: nil)
        let written = client.respond(response, info: info, addVia: true, keepAlive: true)
        info.finish(ExchangeOutcome(status: code, responseBytes: written, error: nil))
    }

    /// Stops whatever is under way (a wait, a backoff, an attempt): the client
    /// went away or a limit passed. An attempt's writer is aborted, which closes
    /// its connection.
    func abandonAttempt(_ error: any Error) {
        switch machine.abandon() {
        case .waiting, .discarding(then: .replay):
            pendingWait?.cancel()
            pendingWait = nil
        case .backingOff:
            backoff?.cancel()
            backoff = nil
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
        // Most configs set neither limit: then the clock is not read (a read costs here).
        guard run.perTryTimeout != nil || run.$deadline != nil else { return }
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
        attemptLimit = (StoredInstant(limit.at), limit.perTry)
        // A callback with this exchange as its handler: no closure, promise or
        // future per attempt, as `scheduleTask` makes.
        attemptTimer = try? eventLoop.assumeIsolated().scheduleCallback(in: TimeAmount(limit.at - now), handler: self)
    }
}

extension Exchange: NIOScheduledCallbackHandler {
    /// The attempt's limit passed with no response head: the attempt is
    /// abandoned and counts as a `request_timeout` failure.
    func handleScheduledCallback(eventLoop: some EventLoop) {
        attemptTimer = nil
        guard machine.isAttempting, let limit = attemptLimit else { return }
        let message = limit.perTry.map { "no response from the upstream within per_try_timeout (\(ConfigUnits.formatDuration($0)))" }
            ?? "the request's deadline passed before the upstream answered"
        let error = GatewayError(.requestTimeout, message, upstream: request.hostPort)
        abandonAttempt(error)
        attemptFailed(error)
    }
}
