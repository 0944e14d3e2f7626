public import GatewayConfig
public import GatewayCore
public import NIOCore

/// Faults toward the app, the first attempt step of an upstream that has any:
/// an error answers in the upstream's place (the retry planner and the token
/// step never see it, the client does); a latency waits on a scheduled task of
/// the loop, then the attempt goes on; a reset closes the client's connection
/// with no response (``GatewayError/Code/connectionReset``, marked injected).
/// Every firing is noted on the record (``Injection``).
public struct FaultStep: AttemptStep {
    public let plan: FaultPlan

    public init(plan: FaultPlan) {
        self.plan = plan
    }

    public func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        guard let firing = plan.draw(method: request.method.rawValue, path: request.path, toward: .app) else { return .proceed }
        switch firing.rule.action {
        case .error(let response):
            context.record.noteInjection(firing.injection, answered: true)
            return .respond(response.injected(toward: .app).proxyResponse)
        case .latency:
            context.record.noteInjection(firing.injection, answered: false)
            let delay = firing.delay ?? .zero
            let scheduled = eventLoop.scheduleTask(in: TimeAmount(delay)) {}
            return .wait(AttemptWait(future: scheduled.futureResult, repeatStep: false, cancel: { scheduled.cancel() }))
        case .reset:
            context.record.noteInjection(firing.injection, answered: true)
            let error = GatewayError(.connectionReset, "injected fault: the connection is reset", upstream: request.hostPort)
            return .wait(AttemptWait(future: eventLoop.makeFailedFuture(error), repeatStep: false, cancel: {}))
        case .slowBody, .resetMidBody:
            // Drawn by the response's own phase (``FaultTransport`` at `responseBody`), never here.
            return .proceed
        }
    }
}
