import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// A request head read on the connection: what ``ExchangeStart`` (shared with
/// the HTTP/2 streams) makes of it, done on this connection: an exchange run,
/// an answer, a refusal (the connection closes after it), a CONNECT.
extension ClientConnectionHandler {
    func startExchange(_ head: ClientRequestHead, framing verdict: Result<RequestHeadValidator.BodyFraming, GatewayError>) {
        let active = environment.liveConfig.current
        // The context is made in place in the info (a local kept beside it was a copy).
        let info = ExchangeInfo(
            method: head.method, version: head.version, uri: head.uri, expectsContinue: head.expectsContinue,
            context: environment.requestContext(clientAddress: clientAddress), observations: []
        )
        current = info
        writer.requestFields = head.headers  // read only if the upstream sends trailers
        guard let eventLoop = context?.eventLoop else { return }
        let verdict = ExchangeStart.begin(
            head, framing: verdict, origin: origin, mayUpgrade: !machine.keepAliveWanted, info: info, active: active, client: self, eventLoop: eventLoop
        )
        switch verdict {
        case .run(let exchange, let plan):
            self.exchange = exchange
            exchange.start(plan)
        case .answer(let response, let keepAlive):
            respond(response, info: info, keepAlive: keepAlive)
        case .refuse(let error):
            respond(error.response(), info: info, keepAlive: false)
        case .connect(let host, let port):
            connect(head: head, host: host, port: port, active: active, info: info)
        }
    }
}
