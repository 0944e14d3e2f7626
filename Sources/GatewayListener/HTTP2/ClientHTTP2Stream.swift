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
/// (``ExchangeClient``, in `+Response.swift`). It is no channel: the
/// connection's ``ClientHTTP2ConnectionHandler`` routes its frames and events
/// to it and writes what it sends.
///
/// Back-pressure both ways rides on HTTP/2 flow control: request DATA is
/// handed to the exchange only while it takes body, and held otherwise, and
/// the stream's receive window is refilled only as it is handed on
/// (`+Flow.swift`); the response is written only while the stream is
/// writable (its send window has room and the connection's socket is
/// writable), else the upstream's reads wait. A client's RST_STREAM cancels
/// the exchange.
final class ClientHTTP2Stream: ExchangeHolder {
    let id: HTTP2StreamID
    let connection: ClientHTTP2ConnectionHandler
    let environment: ClientConnectionEnvironment
    let origin: InterceptedOrigin
    let clientAddress: String
    var exchange: Exchange?
    /// The request, once its HEADERS arrived.
    var info: ExchangeInfo?
    /// How far the request and the response went, and a held read.
    var machine = ClientHTTP2StreamStateMachine()
    /// The client sent `te: trailers`.
    var acceptsTrailers = false
    /// The body and send timeouts, once a body or a closed window needs them (`+Timeouts.swift`).
    var timeouts: ClientTimeouts?
    /// Request frames are handed to the exchange as they come (no read is held).
    var reading = true
    /// Frames that came while a read was held, in order.
    var held: CircularBuffer<HTTP2Frame.FramePayload>?
    /// In the connection's list of streams that got frames in its current read.
    var inReadBatch = false
    /// NIOHTTP2 closed the stream (both ends, or a reset): nothing more is written.
    var closedOnWire = false
    var receiveWindow: HTTP2InboundWindow
    var sendWindow: HTTP2SendWindow
    /// What the exchange was last told (or would be): writable or not.
    var wasWritable = true
    /// The latest response body part, written with the response's end or at
    /// the exchange's flush (`+Response.swift`), counted in ``sendWindow`` already.
    var heldData: ByteBuffer?
    /// What the request's `content-length` still promises. DATA beyond it, or
    /// an end short of it, resets the stream with PROTOCOL_ERROR and cancels
    /// its exchange: an upstream never gets more or less body than the length
    /// it was told.
    var requestLength = HTTP2DeclaredLength(nil)

    init(
        id: HTTP2StreamID, connection: ClientHTTP2ConnectionHandler, environment: ClientConnectionEnvironment,
        origin: InterceptedOrigin, clientAddress: String
    ) {
        self.id = id
        self.connection = connection
        self.environment = environment
        self.origin = origin
        self.clientAddress = clientAddress
        self.receiveWindow = HTTP2InboundWindow(target: HTTP2ServerSettings.streamWindow)
        self.sendWindow = HTTP2SendWindow(initial: connection.clientInitialWindow)
    }

    var eventLoop: any EventLoop { connection.eventLoop }

    /// NIOHTTP2 closed the stream, or the connection closed: the exchange is cancelled.
    func closed() {
        closedOnWire = true
        held = nil
        heldData = nil
        timeouts?.channelClosed()
        timeouts?.detach()
        machine.closed()
        cancelExchange()
    }

    func process(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .headers(let headers):
            switch machine.headersReceived(endStream: headers.endStream) {
            case .start(let endStream):
                if !endStream { streamTimeouts.headReceived(bodyFollows: true) }
                startExchange(headers.headers, endStream: endStream)
            case .endRequest:
                // Request trailers: HTTP/1.1 upstreams take none; the body ends here.
                guard requestLength.mayEnd else { return bodyMismatch() }
                requestEnd()
            case .ignore:
                break
            }
        case .data(let data):
            timeouts?.bytesRead()
            guard requestLength.received(data.data.readableBytes), !data.endStream || requestLength.mayEnd else { return bodyMismatch() }
            if case .byteBuffer(let buffer) = data.data, buffer.readableBytes > 0 {
                exchange?.requestBodyPart(buffer)
            }
            if data.endStream { requestEnd() }
        default:
            break  // RST_STREAM closes the stream (NIOHTTP2 says so); WINDOW_UPDATE and PRIORITY are NIOHTTP2's
        }
    }

    private func requestEnd() {
        guard machine.requestEnded() else { return }
        timeouts?.requestEnded()
        exchange?.requestEnd()
    }

    /// An error NIOHTTP2 reported for this stream (a write it refused): it is reset.
    func errorCaught(_ error: any Error) {
        environment.logger.debug("HTTP/2 stream error", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
        reset()
    }

    /// The request's DATA do not add up to its `content-length`.
    private func bodyMismatch() {
        environment.logger.debug("HTTP/2 stream reset: the request body does not match its content-length", metadata: ["client": "\(clientAddress)"])
        reset(.protocolError)
    }

    /// RST_STREAM (CANCEL, unless `code` says otherwise) unless NIOHTTP2 closed
    /// the stream already; the exchange is cancelled. What the stream wrote
    /// before goes out first (a response cut short reaches the client as far as it came).
    func reset(_ code: HTTP2ErrorCode = .cancel) {
        if !closedOnWire {
            writeHeldData()
            closedOnWire = true
            connection.io.flushNow()
            connection.io.write(NIOAny(HTTP2Frame(streamID: id, payload: .rstStream(code))), promise: nil)
            connection.io.flushSoon()
        }
        closed()
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
            case .malformed(let what): "malformed HTTP/2 request: \(what)"
            }
            return perform(ExchangeStart.refuse(GatewayError(.badRequest, message), info: info), info: info, endStream: endStream)
        }
        requestLength = HTTP2DeclaredLength(translated.declaredLength)
        // END_STREAM on the HEADERS: the body is empty, whatever the length says.
        guard !endStream || requestLength.mayEnd else { return bodyMismatch() }
        let head = translated.head
        acceptsTrailers = translated.acceptsTrailers
        let info = ExchangeInfo(
            method: head.method, version: head.version, uri: head.uri, expectsContinue: head.expectsContinue,
            context: context, observations: []
        )
        self.info = info
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
