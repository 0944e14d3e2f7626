public import GatewayConfig
public import GatewayCore
public import NIOCore

/// Faults toward the gateway's own policies: a transport in front of the
/// next one (mocks, or the pool) that fails an attempt as the upstream would,
/// so the retry planner, the rate limit's `honor_upstream` and the token
/// refresh see it as the upstream's answer. An error is a response of its own
/// (a 429 with `Retry-After`, a 503, a 401), a reset fails the attempt before
/// any response byte, a latency delays the attempt (inside `per_try_timeout`).
/// Every firing is noted on the record and never counted as an upstream attempt.
public final class FaultTransport: UpstreamTransport {
    public let plan: FaultPlan
    let next: any UpstreamTransport

    public init(plan: FaultPlan, next: any UpstreamTransport) {
        self.plan = plan
        self.next = next
    }

    public func startExchange(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamExchangeDelegate
    ) -> UpstreamExchangeCancellation {
        guard let firing = plan.draw(method: request.method.rawValue, path: request.path, toward: .policies) else {
            return next.startExchange(request, record: record, on: eventLoop, delegate: delegate)
        }
        let held = HeldAttempt(delegate: delegate, request: request, eventLoop: eventLoop) { held, _ in
            switch firing.rule.action {
            case .error(let response):
                held.answer(response.injected(toward: .policies))
            case .reset:
                held.fail(GatewayError(.connectionReset, "injected fault: the connection is reset", upstream: request.hostPort))
            case .latency:
                held.pass(to: self.next, request: request, record: record, after: firing.delay)
            case .slowBody, .resetMidBody:
                // Drawn by the response's own phase (``ResponseFaultTransport``), never here.
                held.pass(to: self.next, request: request, record: record)
            }
        }
        record.noteInjection(firing.injection, answered: firing.rule.kind != "latency")
        return held.start()
    }
}
