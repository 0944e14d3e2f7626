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
final class ClientHTTP2StreamHandler: ChannelDuplexHandler, ExchangeHolder {
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
    /// How far the request and the response went, and a held read.
    var machine = ClientHTTP2StreamStateMachine()
    /// The client sent `te: trailers`.
    var acceptsTrailers = false
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
        machine.closed()
        cancelExchange()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            switch machine.headersReceived(endStream: headers.endStream) {
            case .start(let endStream):
                if !endStream { streamTimeouts.headReceived(bodyFollows: true) }
                startExchange(headers.headers, endStream: endStream)
            case .endRequest:
                // Request trailers: HTTP/1.1 upstreams take none; the body ends here.
                requestEnd()
            case .ignore:
                break
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
        guard machine.requestEnded() else { return }
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
        switch machine.read(mayRead: mayRead) {
        case .read: context.read()
        case .hold(let first): if first { timeouts?.readsHeld(true) }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        if writable {
            timeouts?.writabilityChanged(writable: true)
            exchange?.clientWritable()
        } else if !machine.responseEnded || exchange != nil {
            streamTimeouts.writabilityChanged(writable: false)
        }
        context.fireChannelWritabilityChanged()
    }

    /// The exchange takes request body again: a held read goes.
    func requestBodyDemand() {
        guard let context, machine.demand(mayRead: mayRead) else { return }
        timeouts?.readsHeld(false)
        context.read()
    }

    /// The exchange is over (its response ended or was answered locally).
    func exchangeDone() {
        exchange = nil
        requestBodyDemand()  // what is left of the request body is read and dropped
    }

    // MARK: Starting the exchange

    /// The request's HEADERS: translated to an HTTP/1.1 head, then what
    /// ``ExchangeStart`` (shared with HTTP/1.1 connections) makes of it.
    private func startExchange(_ fields: HPACKHeaders, endStream: Bool) {
        let context = environment.requestContext(clientAddress: clientAddress)
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
            return perform(ExchangeStart.refuse(GatewayError(.badRequest, message), info: info), info: info, endStream: endStream)
        }
        let head = translated.head
        acceptsTrailers = translated.acceptsTrailers
        let info = ExchangeInfo(
            method: head.method, version: head.version, uri: head.uri, expectsContinue: head.expectsContinue,
            context: context, observations: []
        )
        self.info = info
        guard let eventLoop = self.context?.eventLoop else { return }
        let framing: RequestHeadValidator.BodyFraming = endStream ? .none : translated.declaredLength.map { .length($0) } ?? .chunked
        let verdict = ExchangeStart.begin(
            head, framing: .success(framing), origin: origin, mayUpgrade: false, info: info,
            active: environment.liveConfig.current, client: self, eventLoop: eventLoop
        )
        perform(verdict, info: info, endStream: endStream)
    }

    private func perform(_ verdict: ExchangeStart.Verdict, info: ExchangeInfo, endStream: Bool) {
        switch verdict {
        case .run(let exchange, let plan):
            self.exchange = exchange
            exchange.start(plan)
        case .answer(let response, _):
            // The stream ends after it; the connection stays.
            respond(response, info: info, addVia: false, keepAlive: true)
        case .refuse(let error):
            respond(error.response(), info: info, addVia: false, keepAlive: false)
        case .connect:
            // Inside interception a CONNECT is refused by the start itself (and the translation before it).
            preconditionFailure("a CONNECT verdict for an HTTP/2 stream")
        }
        if endStream { requestEnd() }
    }
}

extension HTTPVersion {
    static let http2 = HTTPVersion(major: 2, minor: 0)
}
