import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// The direct path of one request: the route's attempt hooks (credentials) on
/// the routed request, one attempt through the transport, the request body
/// passed to the upstream as it arrives (one write in flight; reads held
/// meanwhile) and the response passed to the client as it arrives (the
/// upstream's reads held while the client socket is not writable).
/// No task, no continuation, no intermediate buffer beyond one read.
final class DirectExchange: ClientExchange, UpstreamExchangeDelegate {
    private let handler: ClientConnectionHandler
    private let info: ExchangeInfo
    private var request: ProxyRequest
    /// The request as routed, before attempt hooks added credentials: what logs name.
    private let routed: ProxyRequest
    private let route: UpstreamRoute
    private let transport: any UpstreamTransport
    private var cancellation: UpstreamExchangeCancellation?
    private var writer: (any UpstreamRequestWriter)?
    /// Request body parts that arrived before the upstream took them.
    private var pendingBody = CircularBuffer<ByteBuffer>()
    private var writeInFlight = false
    private var requestEnded = false
    /// The request's end went upstream (or needs not: no body).
    private var endSent: Bool
    private var bytesIn = 0
    private var bytesSent = 0
    private var bytesOut = 0
    private var status: Int?
    private var bodyless = false
    private var finished = false

    init(handler: ClientConnectionHandler, info: ExchangeInfo, request: ProxyRequest, route: UpstreamRoute, transport: any UpstreamTransport) {
        self.handler = handler
        self.info = info
        self.request = request
        self.routed = request
        self.route = route
        self.transport = transport
        self.endSent = request.bodyLengthIsZero
    }

    func start() {
        for hook in route.attemptHooks { hook.prepare(&request) }
        guard let eventLoop = handler.context?.eventLoop else { return }
        cancellation = transport.startExchange(request, record: info.context.record, on: eventLoop, delegate: self)
    }

    // MARK: Request side (from the client)

    /// Once the whole request is in, reads go on (what follows is the next
    /// request, which the handler queues): holding them would cost two
    /// `epoll_ctl` calls per request.
    var wantsRequestBody: Bool {
        finished || requestEnded || (writer != nil && !writeInFlight && pendingBody.isEmpty)
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        bytesIn += buffer.readableBytes
        info.observeRequestBody(buffer)
        pendingBody.append(buffer)
        pump()
    }

    func requestEnd() {
        requestEnded = true
        pump()
    }

    /// Writes the next pending part (or the end of a body of unknown length).
    private func pump() {
        guard let writer, !writeInFlight, !finished else { return }
        let write: EventLoopFuture<Void>
        if let chunk = pendingBody.popFirst() {
            bytesSent += chunk.readableBytes
            let isLast = request.body.declaredLength == bytesSent
            if isLast { endSent = true }
            write = writer.writeBodyPart(chunk, isLast: isLast)
        } else if requestEnded, !endSent {
            endSent = true
            write = writer.endRequest()
        } else {
            return
        }
        writeInFlight = true
        write.assumeIsolated().whenSuccess {
            self.writeInFlight = false
            self.pump()
            self.handler.resumeReading()
        }
        // A failed write fails the exchange in the upstream handler, which tells us.
    }

    func clientWritable() {
        writer?.resumeReading()
    }

    func cancel() {
        guard !finished else { return }
        finished = true
        cancellation?.cancel()
        writer?.abort(CancellationError())
        releaseUpstream()
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil, cancelled: true))
    }

    /// Drops the references to the attempt and the upstream connection once the
    /// exchange is over: the attempt holds this exchange as its delegate, so
    /// keeping them would keep every finished exchange alive.
    private func releaseUpstream() {
        cancellation = nil
        writer = nil
        pendingBody.removeAll()
    }

    // MARK: Response side (from the upstream)

    func upstreamExchangeStarted(_ writer: any UpstreamRequestWriter) {
        guard !finished else { return writer.abort(CancellationError()) }
        self.writer = writer
        if !endSent, info.expectsContinue, info.version.minor >= 1, !handler.machine.responseStarted {
            // The client waits for this before it sends the body.
            handler.context?.writeAndFlush(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
        }
        pump()
        handler.resumeReading()
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        guard !finished else { return }
        status = Int(head.status.code)
        let framing = handler.sendResponseHead(status: head.status, headers: head.headers, declaredLength: head.declaredLength, info: info)
        bodyless = framing.bodyless
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        guard !finished, !bodyless else { return }
        bytesOut += buffer.readableBytes
        handler.sendResponseBodyPart(buffer)
    }

    func upstreamResponseEnd() {
        guard !finished else { return }
        finished = true
        releaseUpstream()
        log(status: status ?? 0, error: nil)
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil))
        handler.sendResponseEnd()
    }

    func upstreamExchangeFailed(_ error: any Error) {
        guard !finished else { return }
        finished = true
        releaseUpstream()
        let gatewayError = (error as? GatewayError) ?? GatewayError(.internalError, "the gateway failed to forward the request", cause: error)
        if gatewayError.code == .internalError {
            info.logger.error("forwarding failed", metadata: ["error": "\(error)"])
        }
        guard !handler.machine.responseStarted else {
            // Mid-response: the client sees the truncation as a closed connection.
            info.logger.info("\(info.method) \(ExchangeLogLine.withoutQueryValues(routed.url)) aborted: \(gatewayError.code.rawValue)")
            info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: gatewayError.code))
            handler.machine.closeAfterWrite()
            handler.context?.close(promise: nil)
            return
        }
        let code = Int(gatewayError.status.code)
        log(status: code, error: gatewayError.code)
        info.finish(ExchangeOutcome(status: code, responseBytes: 0, error: gatewayError.code))
        handler.respond(gatewayError.response(), info: info, addVia: true, keepAlive: false)
    }

    var upstreamShouldPauseReading: Bool {
        !(handler.context?.channel.isWritable ?? true)
    }

    private func log(status: Int, error: GatewayError.Code?) {
        ExchangeLogLine.log(
            info.logger, method: "\(info.method)", url: routed.url, status: status, started: info.started,
            bytesIn: bytesIn, bytesOut: bytesOut, upstream: request.upstreamName, error: error
        )
    }
}

extension ProxyRequest {
    /// No request body goes upstream.
    var bodyLengthIsZero: Bool {
        if case .empty = body.storage { return true }
        return body.declaredLength == 0
    }
}
