import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// The attempts of an exchange: the steps before each one (which may answer,
/// or wait), the attempt itself under `per_try_timeout` and the request's
/// deadline, and what the steps and the retry planner say of its response.
/// Whether an attempt goes again, when, and with what body is the machine's
/// (``ExchangeStateMachine``); its actions are performed in `+Actions.swift`.
extension Exchange {
    /// - Parameter plan: the route's retry planner's `begin` for this request.
    func start(_ plan: RetryPlan) {
        let run: RetryRun? = if case .retrying(let run) = plan { run } else { nil }
        // `request` is still as routed: the steps' replay limits are asked of it.
        let bodyless = request.bodyLengthIsZero
        var stepLimit: Int?
        if !bodyless {
            for step in route.steps {
                if let limit = step.replayLimit(for: request) { stepLimit = max(stepLimit ?? 0, limit) }
            }
        }
        perform(machine.start(
            retry: run, stepReplayLimit: stepLimit, declaredLength: request.body.declaredLength, bodyless: bodyless,
            idempotent: request.isIdempotent, idempotencyKey: request.headers.contains(name: "idempotency-key")
        ))
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
                    let action = self.machine.stepWaitEnded(failure: result.failureOrNil, repeatStep: wait.repeatStep)
                    guard action != .none else { return }
                    self.pendingWait = nil
                    if case .success(let edit) = result, let edit { edit(&self.request) }
                    self.perform(action)
                }
                return
            }
        }
        guard machine.currentStep != nil else { return }
        send()
    }

    private func send() {
        machine.attemptStarted()
        let delegate: any UpstreamAttemptDelegate
        if machine.resend.mayAttemptAgain {
            let forwarder = AttemptDelegate(self)
            attemptDelegate = forwarder
            delegate = forwarder
        } else {
            delegate = self
        }
        armAttemptTimerOnceRequestIsIn()
        cancellation = transport.startAttempt(request, record: info.context.record, on: eventLoop, delegate: delegate)
    }

    /// Arms the attempt's timer once the client's whole request is in: a body
    /// still coming from the client (streamed to the first attempt) is not the
    /// upstream's time. (An upstream that stops taking the body meanwhile is
    /// the pool's `request_timeout`'s.)
    func armAttemptTimerOnceRequestIsIn() {
        guard let run = machine.resend.retry, attemptTimer == nil, machine.isAttempting, routedBodyLengthIsZero || body.requestEnded else { return }
        armAttemptTimer(run)
    }

    /// The retry planner's wait after a failed attempt (nil: no retry).
    func retryDelay(after error: GatewayError, run: inout RetryRun) -> Duration? {
        route.retry?.retry(after: error, run: &run, context: info.context)
    }

    /// What the steps (a 401 to a token) and then the retry planner (a
    /// retryable status) make of a response head. Every step sees the head;
    /// the first to ask for a replay has it, if the machine allows one.
    func verdict(on head: UpstreamResponseHead) -> ExchangeStateMachine.HeadVerdict {
        var replay: AttemptWait?
        if !route.steps.isEmpty {
            let mayReplay = machine.resend.stepsMayReplay
            for step in route.steps {
                if case .replay(let wait) = step.responseHead(head, of: request, context: info.context, mayReplay: mayReplay && replay == nil, on: eventLoop) {
                    replay = wait
                }
            }
        }
        if let replay { pendingWait = replay }
        return machine.responseHead(replayAsked: replay != nil, requestSent: body.endSent) { run in
            // The fields are made `HTTPHeaders` only for a status the planner may retry.
            guard let planner = route.retry, planner.considers(status: head.status) else { return nil }
            return planner.retry(afterStatus: head.status, headers: head.headers, run: &run, context: info.context)
        }
    }

    /// A step answered for the upstream (a local 429): the response goes to the
    /// client with `Via`, and the connection stays open.
    private func respondLocally(_ response: ProxyResponse) {
        let code = Int(response.status.code)
        machine.answeredLocally(status: code)
        releaseUpstream()
        log(status: code, error: nil)
        info.observeResponseHead(status: response.status, fields: ResponseFields(response.headers), via: RequestRouter.responseVia)
        let written = client.respond(response, info: info, addVia: true, keepAlive: true)
        info.finish(ExchangeOutcome(status: code, responseBytes: written, error: nil))
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
        // Decided first: the abort's callbacks find no attempt in flight.
        let action = machine.upstreamFailed(error, retryDelay: { self.retryDelay(after: $0, run: &$1) })
        abortAttempt(error)
        perform(action)
    }
}

extension Result {
    /// The error of a failed result, nil for a success.
    var failureOrNil: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
