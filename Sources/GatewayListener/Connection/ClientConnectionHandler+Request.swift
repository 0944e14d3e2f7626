import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// The first steps of every request, in order: framing and headers, the
/// admission steps (proxy authentication, access rules: ``AdmissionStep``),
/// where to (a tunnel, an upstream); then the exchange on the route its
/// upstream was built with.
extension ClientConnectionHandler {
    func startExchange(_ head: ClientRequestHead, framing verdict: Result<RequestHeadValidator.BodyFraming, GatewayError>) {
        let active = environment.liveConfig.current
        let requestID = environment.requestIDs.next()
        let started = ContinuousClock.now
        // Lines of this request carry `request=<id>`; the tagged logger is only built where one is logged.
        // The context is made in place in the info (a local kept beside it was a copy).
        let info = ExchangeInfo(
            method: head.method, version: head.version, uri: head.uri, expectsContinue: head.expectsContinue,
            context: RequestContext(
                id: requestID, clientAddress: clientAddress, startedAt: started, logger: environment.logger,
                exchangeLines: environment.exchangeLines, tagsLinesWithID: true
            ),
            observations: []
        )
        current = info
        requestFields = head.headers  // read only if the upstream sends trailers

        // 1. Framing and headers (judged by the decoder): refuse anything ambiguous before reading a body byte.
        let framing: RequestHeadValidator.BodyFraming
        let target: ClientTarget
        do {
            framing = try verdict.get()
            guard let parsed = ClientTarget.parse(head.uri, isConnect: head.method == .CONNECT) else {
                throw GatewayError(.badRequest, "malformed request target")
            }
            target = parsed
        } catch {
            return refuse(error, info: info)
        }

        // Inside an intercepted CONNECT, a request for another host is not this origin's.
        if let origin, origin.misdirects(head.headers.first(name: "host")) {
            return refuse(GatewayError(.misdirectedRequest, "this connection is for \(origin.host):\(origin.port) only (its CONNECT)"), info: info)
        }

        // A probe of the proxy port itself (``ProxyReadiness``): answered before admission, not an exchange.
        if ProxyReadiness.isProbe(target, method: head.method, bodyless: framing == .none, insideInterception: origin != nil) {
            respond(ProxyReadiness.response, info: info)
            return
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
            respond(response, info: info, keepAlive: keepAlive)
            let code = response.headers.first(name: "x-gateway-error").flatMap(GatewayError.Code.init(rawValue:))
            ExchangeLogLine.log(info.context, method: head.method, target: .uri(head.uri), status: Int(response.status.code), started: started, bytesIn: 0, bytesOut: 0, upstream: nil, error: code)
            return
        }

        // 3. Where to.
        switch resolved {
        case .origin:
            refuse(GatewayError(.unsupportedTarget, "this is a proxy: send absolute-form requests (curl -x http://HOST:PORT http://example.com/); metrics and health are on the admin port"), info: info)
        case .authority(let host, let port):
            guard origin == nil else {
                return refuse(GatewayError(.unsupportedTarget, "CONNECT inside an intercepted tunnel is not supported"), info: info)
            }
            connect(head: head, host: host, port: port, active: active, info: info)
        case .absolute(let scheme, let host, let port, let path):
            let declaredLength: Int? = switch framing {
            case .none: 0
            case .length(let length): length
            case .chunked: nil
            }
            var request = RequestRouter(active: active).route(head: head, scheme: scheme, host: host, port: port, target: path, declaredLength: declaredLength)
            // An upgrade never keeps the connection: most requests stop at the first test.
            if framing == .none, !machine.keepAliveWanted, head.isWebSocketHandshake {
                // The handshake's own fields, so traces, HAR and curl lines show a
                // replayable handshake; the upstream head writes them for its hop.
                request.isWebSocketHandshake = true
                request.headers.add(name: "Connection", value: "Upgrade")
                request.headers.add(name: "Upgrade", value: "websocket")
            }
            guard let eventLoop = self.context?.eventLoop else { return }
            let (exchange, plan) = Exchange.routed(consume request, info: info, active: active, client: self, eventLoop: eventLoop)
            self.exchange = exchange
            exchange.start(plan)
        }
    }

    /// Answers with a gateway error and closes the connection after it.
    func refuse(_ error: any Error, info: ExchangeInfo) {
        let gatewayError = (error as? GatewayError) ?? GatewayError(.badRequest, "bad request", cause: error)
        respond(gatewayError.response(), info: info, keepAlive: false)
        ExchangeLogLine.log(
            info.context, method: info.method, target: .uri(info.uri), status: Int(gatewayError.status.code), started: info.started,
            bytesIn: 0, bytesOut: 0, upstream: gatewayError.upstream, error: gatewayError.code
        )
    }
}
