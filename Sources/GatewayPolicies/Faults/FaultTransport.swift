public import GatewayConfig
public import GatewayCore
public import NIOCore

/// Faults that stand in a transport, in front of the next one, at one stage:
///
/// - ``FaultStage/upstream`` (`toward: policies`): the attempt fails as the
///   upstream would, so the retry planner, the rate limit's `honor_upstream`
///   and the token refresh see it as the upstream's answer. An error is a
///   response of its own (a 429 with `Retry-After`, a 503, a 401), a reset
///   fails the attempt before any response byte, a latency delays the attempt
///   (inside `per_try_timeout`). Never counted as an upstream attempt.
/// - ``FaultStage/responseBody`` (toward the app, the outermost transport):
///   the attempt goes on as usual and its response is shaped on the way back
///   (``ShapedResponse``): a slow body, or a reset in the middle of the body.
///
/// Drawn once per attempt; the others pass straight on. Every firing is noted on the record.
public final class FaultTransport: UpstreamTransport {
    public let plan: FaultPlan
    public let stage: FaultStage
    let next: any UpstreamTransport

    public init(plan: FaultPlan, stage: FaultStage = .upstream, next: any UpstreamTransport) {
        self.plan = plan
        self.stage = stage
        self.next = next
    }

    public func startAttempt(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        guard let firing = plan.draw(method: request.method.rawValue, path: request.path, at: stage) else {
            return next.startAttempt(request, record: record, on: eventLoop, delegate: delegate)
        }
        let shape: ShapedResponse.Shape
        switch firing.rule.action {
        case .slowBody(let perSecond): shape = .slow(bytesPerSecond: perSecond)
        case .resetMidBody(let after): shape = .reset(afterBytes: after)
        case .error, .latency, .reset: return standIn(firing, request: request, record: record, on: eventLoop, delegate: delegate)
        }
        let shaped = ShapedResponse(
            shape, delegate: delegate, record: record, injection: firing.injection, upstream: request.hostPort, eventLoop: eventLoop
        )
        shaped.upstream = next.startAttempt(request, record: record, on: eventLoop, delegate: shaped)
        // Called on the loop; the exchange drops it when it ends.
        let bound = NIOLoopBound(shaped, eventLoop: eventLoop)
        return UpstreamAttemptCancellation { bound.value.cancel() }
    }

    /// An error, a reset or a latency in the upstream's place (``FaultStage/upstream``).
    private func standIn(
        _ firing: FaultPlan.Firing, request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        let held = HeldAttempt(delegate: delegate, request: request, eventLoop: eventLoop) { held, _ in
            switch firing.rule.action {
            case .error(let response):
                held.answer(response.injected(toward: .policies))
            case .reset:
                held.fail(GatewayError(.connectionReset, "injected fault: the connection is reset", upstream: request.hostPort))
            case .latency, .slowBody, .resetMidBody:
                held.pass(to: self.next, request: request, record: record, after: firing.delay)
            }
        }
        record.noteInjection(firing.injection, answered: firing.rule.kind != "latency")
        return held.start()
    }
}
