public import GatewayConfig
public import GatewayCore
public import NIOCore

/// Faults on the response body toward the app (``FaultStage/responseBody``):
/// the outermost transport of an upstream that has any. A matching attempt
/// goes on as usual (to the policies' faults, the mocks, the pool) and its
/// response is shaped on the way back (``ShapedResponse``): a slow body
/// trickles to the client at the rule's bytes per second, or the client's
/// connection is reset after the rule's count of body bytes. Drawn once per
/// attempt; the others pass straight on.
public final class ResponseFaultTransport: UpstreamTransport {
    public let plan: FaultPlan
    let next: any UpstreamTransport

    public init(plan: FaultPlan, next: any UpstreamTransport) {
        self.plan = plan
        self.next = next
    }

    public func startExchange(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamExchangeDelegate
    ) -> UpstreamExchangeCancellation {
        guard let firing = plan.draw(method: request.method.rawValue, path: request.path, at: .responseBody) else {
            return next.startExchange(request, record: record, on: eventLoop, delegate: delegate)
        }
        let shape: ShapedResponse.Shape
        switch firing.rule.action {
        case .slowBody(let perSecond): shape = .slow(bytesPerSecond: perSecond)
        case .resetMidBody(let after): shape = .reset(afterBytes: after)
        case .error, .latency, .reset: return next.startExchange(request, record: record, on: eventLoop, delegate: delegate)
        }
        let shaped = ShapedResponse(
            shape, delegate: delegate, record: record, injection: firing.injection, upstream: request.hostPort, eventLoop: eventLoop
        )
        shaped.upstream = next.startExchange(request, record: record, on: eventLoop, delegate: shaped)
        // Called on the loop; the exchange drops it when it ends.
        let bound = NIOLoopBound(shaped, eventLoop: eventLoop)
        return UpstreamExchangeCancellation { bound.value.cancel() }
    }
}
