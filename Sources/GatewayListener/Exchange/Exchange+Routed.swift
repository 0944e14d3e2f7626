import GatewayCore
import NIOCore

/// Where every client side starts an exchange (an HTTP/1.1 connection's
/// request, an HTTP/2 stream): admission in the config's order, then the
/// upstream's route and its observers.
extension ActiveConfig {
    /// Runs the admission steps in order (proxy auth, access rules); the first
    /// that does not proceed decides.
    func admit(_ request: AdmissionRequest) -> Admission {
        for step in admission {
            switch step.admit(request) {
            case .proceed:
                continue
            case let verdict:
                return verdict
            }
        }
        return .proceed
    }
}

extension Exchange {
    /// The exchange of `request` on its upstream's route, with the observers
    /// begun (kept in `info`) and the retry plan it starts with: the caller
    /// keeps the exchange, then calls ``start(_:)``.
    static func routed(
        _ request: consuming ProxyRequest, info: ExchangeInfo, active: ActiveConfig, client: any ExchangeClient, eventLoop: any EventLoop
    ) -> (exchange: Exchange, plan: RetryPlan) {
        info.context.record.upstreamName = request.upstreamName
        let route = active.routes.route(forUpstream: request.upstreamName)
        if !route.observers.isEmpty {
            var observations = ExchangeObservations()
            for observer in route.observers { observations.append(observer.begin(request, context: info.context)) }
            info.observations = observations
        }
        let plan = route.retry?.begin(request) ?? .single
        let exchange = Exchange(client: client, info: info, request: consume request, route: route, transport: route.transport ?? active.transport, eventLoop: eventLoop)
        return (exchange, plan)
    }
}
