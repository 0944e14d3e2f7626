import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

/// One HTTP/2 stream of an intercepted client connection: one exchange, run
/// through the same phases as an HTTP/1.1 request (admission, route,
/// observers, retry, attempt steps). The stream is the exchange's client
/// (``ExchangeClient``, in `+Response.swift`).
///
/// Back-pressure both ways rides on NIOHTTP2's flow control: request DATA is
/// read (and the stream's window opened again) only while the exchange takes
/// body; the response is written only while the stream is writable (its
/// window and the connection's socket), else the upstream's reads wait.
/// A client's RST_STREAM closes this channel: the exchange is cancelled.
final class HTTP2StreamHandler: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    let environment: ClientConnectionEnvironment
    let origin: InterceptedOrigin
    let clientAddress: String
    var context: ChannelHandlerContext?
    var exchange: Exchange?
    /// The request, once its HEADERS arrived.
    var info: ExchangeInfo?
    /// The response's HEADERS went out.
    var headSent = false
    /// The response ended (END_STREAM sent, or the stream reset).
    var responseEnded = false
    /// The client sent `te: trailers`.
    var acceptsTrailers = false
    /// A `read()` held while the exchange takes no request body.
    private var heldRead = false
    /// The request's END_STREAM arrived.
    private var requestEnded = false
    /// The body and send timeouts, once a body or a closed window needs them (`+Timeouts.swift`).
    var timeouts: ClientTimeouts?

    init(environment: ClientConnectionEnvironment, origin: InterceptedOrigin, clientAddress: String) {
        self.environment = environment
        self.origin = origin
        self.clientAddress = clientAddress
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeouts?.detach()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeouts?.channelClosed()
        responseEnded = true
        if let exchange {
            self.exchange = nil
            exchange.cancel()
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            if info == nil {
                if !headers.endStream { streamTimeouts.headReceived(bodyFollows: true) }
                startExchange(headers.headers, endStream: headers.endStream)
            } else if headers.endStream {
                // Request trailers: HTTP/1.1 upstreams take none; the body ends here.
                requestEnd()
            }
        case .data(let data):
            timeouts?.bytesRead()
            if case .byteBuffer(let buffer) = data.data, buffer.readableBytes > 0 {
                exchange?.requestBodyPart(buffer)
            }
            if data.endStream { requestEnd() }
        default:
            break  // RST_STREAM closes the channel; WINDOW_UPDATE and PRIORITY are NIOHTTP2's
        }
    }

    private func requestEnd() {
        guard !requestEnded else { return }
        requestEnded = true
        timeouts?.requestEnded()
        exchange?.requestEnd()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A stream error (a bad content-length, a protocol violation on this stream): NIOHTTP2 resets it.
        environment.logger.debug("HTTP/2 stream error", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
        context.close(promise: nil)
    }

    // MARK: Reads

    private var mayRead: Bool {
        exchange?.wantsRequestBody ?? true
    }

    func read(context: ChannelHandlerContext) {
        if mayRead {
            context.read()
        } else {
            if !heldRead { timeouts?.readsHeld(true) }
            heldRead = true
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        if writable {
            timeouts?.writabilityChanged(writable: true)
            exchange?.clientWritable()
        } else if !responseEnded || exchange != nil {
            streamTimeouts.writabilityChanged(writable: false)
        }
        context.fireChannelWritabilityChanged()
    }

    /// The exchange takes request body again: a held read goes.
    func requestBodyDemand() {
        guard heldRead, let context, mayRead else { return }
        heldRead = false
        timeouts?.readsHeld(false)
        context.read()
    }

    /// The exchange is over (its response ended or was answered locally).
    func exchangeDone() {
        exchange = nil
        requestBodyDemand()  // what is left of the request body is read and dropped
    }

    // MARK: Starting the exchange

    private func startExchange(_ fields: HPACKHeaders, endStream: Bool) {
        let active = environment.liveConfig.current
        let started = ContinuousClock.now
        let context = RequestContext(
            id: environment.requestIDs.next(), clientAddress: clientAddress, startedAt: started,
            logger: environment.logger, exchangeLines: environment.exchangeLines, tagsLinesWithID: true
        )
        context.record.clientHTTPVersion = UpstreamHTTPVersion.http2Name
        let translated: HTTP2Translation.RequestHead
        do throws(HTTP2Translation.Refusal) {
            translated = try HTTP2Translation.request(fields)
        } catch {
            let info = ExchangeInfo(method: .GET, version: .http2, uri: "/", expectsContinue: false, context: context, observations: [])
            self.info = info
            let message = switch error {
            case .connectNotSupported: "CONNECT inside an intercepted connection is not supported"
            case .invalidField(let name): "malformed HTTP/2 request: \(name) has a character HTTP/1.1 does not allow"
            case .missingPseudoField(let name): "malformed HTTP/2 request: no \(name)"
            }
            return refuse(GatewayError(.badRequest, message), info: info)
        }
        let head = translated.head
        acceptsTrailers = translated.acceptsTrailers
        let info = ExchangeInfo(
            method: head.method, version: head.version, uri: head.uri, expectsContinue: head.expectsContinue,
            context: context, observations: []
        )
        self.info = info
        guard let target = ClientTarget.parse(head.uri, isConnect: false) else {
            return refuse(GatewayError(.badRequest, "malformed request target"), info: info)
        }
        if origin.misdirects(head.headers.first(name: "host")) {
            return refuse(GatewayError(.misdirectedRequest, "this connection is for \(origin.host):\(origin.port) only (its CONNECT)"), info: info)
        }
        let resolved = origin.resolve(target)
        let admission = AdmissionRequest(head: head, target: resolved, insideInterception: true, bodyless: endStream)
        switch active.admit(admission) {
        case .proceed:
            break
        case .refuse(let error):
            return refuse(error, info: info)
        case .answer(let response, _):
            respond(response, info: info, addVia: false, keepAlive: true)
            let code = response.headers.first(name: "x-gateway-error").flatMap(GatewayError.Code.init(rawValue:))
            ExchangeLogLine.log(context, method: head.method, target: .uri(head.uri), status: Int(response.status.code), started: started, bytesIn: 0, bytesOut: 0, upstream: nil, error: code)
            return
        }
        guard case .absolute(let scheme, let host, let port, let path) = resolved, let eventLoop = self.context?.eventLoop else {
            return refuse(GatewayError(.badRequest, "malformed request target"), info: info)
        }
        let declaredLength = endStream ? 0 : translated.declaredLength
        let request = RequestRouter(active: active).route(head: head, scheme: scheme, host: host, port: port, target: path, declaredLength: declaredLength)
        let (exchange, plan) = Exchange.routed(consume request, info: info, active: active, client: self, eventLoop: eventLoop)
        self.exchange = exchange
        exchange.start(plan)
        if endStream { requestEnd() }
    }

    /// Answers with a gateway error; the stream ends after it (the connection stays).
    func refuse(_ error: GatewayError, info: ExchangeInfo) {
        respond(error.response(), info: info, addVia: false, keepAlive: false)
        ExchangeLogLine.log(
            info.context, method: info.method, target: .uri(info.uri), status: Int(error.status.code), started: info.started,
            bytesIn: 0, bytesOut: 0, upstream: error.upstream, error: error.code
        )
    }
}

extension HTTPVersion {
    static let http2 = HTTPVersion(major: 2, minor: 0)
}
