import GatewayCore
import NIOCore

/// Where every client side starts an exchange (an HTTP/1.1 connection's
/// request, an HTTP/2 stream inside interception), in order: the head's
/// framing (judged by the client's decoder) and its target, a request for
/// another host inside interception (421), the proxy port's own readiness
/// probe, the admission steps in the config's order (proxy auth, access
/// rules: ``AdmissionStep``), where to (a tunnel, an upstream), and the
/// upstream's route with its observers begun. It returns what the client
/// does (``Verdict``); the refusals and admission's answers are logged here,
/// so that no client writes an exchange's line.
enum ExchangeStart {
    enum Verdict {
        /// Run this exchange: the client keeps it, then calls ``Exchange/start(_:)`` with the plan.
        case run(Exchange, RetryPlan)
        /// Answer with this response of the gateway's own (a readiness probe,
        /// an admission step's answer); `keepAlive` false: the connection closes after it.
        case answer(ProxyResponse, keepAlive: Bool)
        /// Refuse with this error: the connection (or the stream) ends after it.
        case refuse(GatewayError)
        /// A CONNECT to `host:port` (an HTTP/1.1 client outside interception): a tunnel.
        case connect(host: String, port: Int)
    }

    /// - Parameters:
    ///   - framing: the body's framing as the client's decoder judged the head, or why it refused it.
    ///   - origin: the intercepted origin the client's connection is for (inside interception).
    ///   - mayUpgrade: a WebSocket handshake may be carried (an HTTP/1.1 connection not kept alive).
    static func begin(
        _ head: ClientRequestHead, framing verdict: Result<RequestHeadValidator.BodyFraming, GatewayError>, origin: InterceptedOrigin?,
        mayUpgrade: Bool, info: ExchangeInfo, active: ActiveConfig, client: any ExchangeClient, eventLoop: any EventLoop
    ) -> Verdict {
        // 1. Framing and target: anything ambiguous is refused before a body byte is read.
        let framing: RequestHeadValidator.BodyFraming
        switch verdict {
        case .success(let judged): framing = judged
        case .failure(let error): return refuse(error, info: info)
        }
        guard let target = ClientTarget.parse(head.uri, isConnect: head.method == .CONNECT) else {
            return refuse(GatewayError(.badRequest, "malformed request target"), info: info)
        }
        // Inside an intercepted CONNECT, a request for another host is not this origin's.
        if let origin, origin.misdirects(head.headers.first(name: "host")) {
            return refuse(GatewayError(.misdirectedRequest, "this connection is for \(origin.host):\(origin.port) only (its CONNECT)"), info: info)
        }
        // A probe of the proxy port itself (``ProxyReadiness``): answered before admission, not an exchange.
        if ProxyReadiness.isProbe(target, method: head.method, bodyless: framing == .none, insideInterception: origin != nil) {
            return .answer(ProxyReadiness.response, keepAlive: true)
        }

        // 2. Admission, in the order the config load built it: proxy auth
        //    (not inside an intercepted tunnel: its CONNECT was authenticated), access rules.
        let resolved = origin.map { $0.resolve(target) } ?? target
        let admission = AdmissionRequest(head: head, target: resolved, insideInterception: origin != nil, bodyless: framing == .none)
        switch active.admit(admission) {
        case .proceed:
            break
        case .refuse(let error):
            return refuse(error, info: info)
        case .answer(let response, let keepAlive):
            let code = response.headers.first(name: "x-gateway-error").flatMap(GatewayError.Code.init(rawValue:))
            log(info, status: Int(response.status.code), upstream: nil, error: code)
            return .answer(response, keepAlive: keepAlive)
        }

        // 3. Where to.
        switch resolved {
        case .origin:
            return refuse(GatewayError(.unsupportedTarget, "this is a proxy: send absolute-form requests (curl -x http://HOST:PORT http://example.com/); metrics and health are on the admin port"), info: info)
        case .authority(let host, let port):
            guard origin == nil else {
                return refuse(GatewayError(.unsupportedTarget, "CONNECT inside an intercepted tunnel is not supported"), info: info)
            }
            return .connect(host: host, port: port)
        case .absolute(let scheme, let host, let port, let path):
            let declaredLength: Int? = switch framing {
            case .none: 0
            case .length(let length): length
            case .chunked: nil
            }
            var request = RequestRouter(active: active).route(head: head, scheme: scheme, host: host, port: port, target: path, declaredLength: declaredLength)
            // An upgrade never keeps the connection: most requests stop at the first test.
            if mayUpgrade, framing == .none, head.isWebSocketHandshake {
                // The handshake's own fields, so traces, HAR and curl lines show a
                // replayable handshake; the upstream head writes them for its hop.
                request.isWebSocketHandshake = true
                request.headers.add(name: "Connection", value: "Upgrade")
                request.headers.add(name: "Upgrade", value: "websocket")
            }
            return routed(consume request, info: info, active: active, client: client, eventLoop: eventLoop)
        }
    }

    /// A request refused before it became an exchange: its line is logged, and the client answers `error`.
    static func refuse(_ error: GatewayError, info: ExchangeInfo) -> Verdict {
        log(info, status: Int(error.status.code), upstream: error.upstream, error: error.code)
        return .refuse(error)
    }

    /// The exchange of `request` on its upstream's route, with the observers begun (kept in `info`).
    private static func routed(
        _ request: consuming ProxyRequest, info: ExchangeInfo, active: ActiveConfig, client: any ExchangeClient, eventLoop: any EventLoop
    ) -> Verdict {
        info.context.record.upstreamName = request.upstreamName
        let route = active.routes.route(forUpstream: request.upstreamName)
        if !route.observers.isEmpty {
            var observations = ExchangeObservations()
            for observation in route.observers { observations.append(observation.begin(request, context: info.context)) }
            info.observations = observations
        }
        let plan = route.retry?.begin(request) ?? .single
        let exchange = Exchange(client: client, info: info, request: consume request, route: route, transport: route.transport ?? active.transport, eventLoop: eventLoop)
        return .run(exchange, plan)
    }

    private static func log(_ info: ExchangeInfo, status: Int, upstream: String?, error: GatewayError.Code?) {
        ExchangeLogLine.log(
            info.context, method: info.method, target: .uri(info.uri), status: status, started: info.started,
            bytesIn: 0, bytesOut: 0, upstream: upstream, error: error
        )
    }
}

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
