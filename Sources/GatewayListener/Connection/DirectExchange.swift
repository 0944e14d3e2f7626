import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// The direct path of one request, all on the client connection's event loop:
/// the route's retry planner and attempt steps (rate limit, credential), then
/// an attempt through the transport, the request body passed upstream as it
/// arrives (one write in flight; reads held meanwhile) and the response passed
/// to the client as it arrives (the upstream's reads held while the client
/// socket is not writable). It waits only when a policy must: a step's future
/// (an upstream's pause, a queue slot) or a retry's backoff (a scheduled task).
/// No task, no continuation, no intermediate buffer beyond one read, except
/// the copy of a body that may be sent again (``RequestReplayBuffer``).
///
/// Its progress is ``Phase``; the attempts are in ``DirectExchange+Attempts``,
/// sending a body again in ``DirectExchange+Replay``.
final class DirectExchange: UpstreamExchangeDelegate {
    enum Phase {
        /// Running the attempt steps, from `nextStep`.
        case preparing
        /// A step waits (its wait can be withdrawn).
        case waiting(AttemptWait)
        /// An attempt is in flight and no response head came yet.
        case attempting
        /// A response turned down (by the retry planner, or a step that replays
        /// the request): its body is dropped, then the next attempt.
        case discarding(then: NextAttempt)
        /// Sleeping before the next attempt.
        case backingOff(Scheduled<Void>)
        /// The next attempt sends the body again (bodies up to `within` bytes):
        /// it waits for the rest of it from the client.
        case awaitingBody(within: Int)
        /// An attempt failed while the client was still sending a body that
        /// may outgrow its copy: whether to retry is decided once the body is
        /// in, so a retry that cannot go is neither taken from the retry
        /// budget nor counted.
        case awaitingBodyToRetry(after: GatewayError)
        /// The response head went to the client: its body follows.
        case responding
        case finished
    }

    /// When the attempt after a discarded response goes.
    enum NextAttempt {
        /// After the retry planner's backoff.
        case after(Duration)
        /// Once a step's wait is over (a token refresh after a 401).
        case replay(AttemptWait)
    }

    let handler: ClientConnectionHandler
    let info: ExchangeInfo
    /// The request of the attempt in flight (steps add credentials to a copy of `routed`).
    var request: ProxyRequest
    /// The request as routed, before steps added credentials: what logs name.
    let routed: ProxyRequest
    let route: UpstreamRoute
    let transport: any UpstreamTransport
    let eventLoop: any EventLoop
    var phase = Phase.preparing
    var nextStep = 0
    /// The retry state of a request that may be sent more than once.
    var retryRun: RetryRun?
    /// A step replayed the request already (after a 401): at most once per request.
    var replayedByStep = false
    /// Forwards the callbacks of the attempt in flight (requests that may be sent
    /// again only: a given-up attempt's late callbacks must not reach the next one).
    var attemptDelegate: AttemptDelegate?
    var attemptTimer: Scheduled<Void>?
    var cancellation: UpstreamExchangeCancellation?
    var writer: (any UpstreamRequestWriter)?
    /// The request body's way upstream (a pure state machine).
    var body: RequestBodyForwarding
    /// A copy of a body that may be sent again (retried, replayed after a 401).
    var replayBuffer: RequestReplayBuffer?
    /// Why the last attempt failed: the client's answer if the body cannot go again after all.
    var lastFailure: (any Error)?
    /// `100 Continue` went to the client.
    var continueSent = false
    var bytesIn = 0
    var bytesOut = 0
    var status: Int?
    private var bodyless = false
    /// Response parts written to the client since the last flush (flushed at the end of the upstream read).
    private var unflushed = false

    init(handler: ClientConnectionHandler, info: ExchangeInfo, request: ProxyRequest, route: UpstreamRoute, transport: any UpstreamTransport, eventLoop: any EventLoop) {
        self.handler = handler
        self.info = info
        self.request = request
        self.routed = request
        self.route = route
        self.transport = transport
        self.eventLoop = eventLoop
        self.body = RequestBodyForwarding(declaredLength: request.body.declaredLength, bodyless: request.bodyLengthIsZero)
    }

    var finished: Bool {
        if case .finished = phase { return true }
        return false
    }

    // MARK: Request side (from the client)

    /// Once the whole request is in, reads go on (what follows is the next
    /// request, which the handler queues): holding them would cost two
    /// `epoll_ctl` calls per request.
    var wantsRequestBody: Bool {
        finished || body.wantsMore(writerReady: writer != nil)
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        bytesIn += buffer.readableBytes
        info.observeRequestBody(buffer)
        replayBuffer?.append(buffer)
        body.received(buffer)
        pump()
        bodyArrived()
    }

    func requestEnd() {
        replayBuffer?.end()
        body.ended()
        armAttemptTimerOnceRequestIsIn()
        pump()
        bodyArrived()
    }

    /// Writes the next pending part (or the end of a body of unknown length).
    private func pump() {
        guard let writer, !finished, let next = body.nextWrite(writerReady: true) else { return }
        let write: EventLoopFuture<Void>
        switch next {
        case .part(let chunk, let isLast):
            write = writer.writeBodyPart(chunk, isLast: isLast)
        case .end:
            write = writer.endRequest()
        }
        write.assumeIsolated().whenSuccess {
            self.body.writeCompleted()
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
        abandonAttempt(CancellationError())
        phase = .finished
        releaseUpstream()
        info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil, cancelled: true))
    }

    /// Drops the references to the attempt and the upstream connection once the
    /// exchange is over: the attempt holds this exchange as its delegate, so
    /// keeping them would keep every finished exchange alive.
    func releaseUpstream() {
        cancellation = nil
        writer = nil
        attemptDelegate = nil
        attemptTimer?.cancel()
        attemptTimer = nil
        body.reset()
        replayBuffer = nil
    }

    // MARK: Response side (from the upstream)

    func upstreamExchangeStarted(_ writer: any UpstreamRequestWriter) {
        guard case .attempting = phase else { return writer.abort(CancellationError()) }
        self.writer = writer
        if !body.endSent { sendContinueIfAwaited() }
        pump()
        handler.resumeReading()
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        guard case .attempting = phase else { return }
        attemptTimer?.cancel()
        attemptTimer = nil
        if let next = nextAttempt(after: head) {
            guard body.endSent else {
                // Answered before the whole body went: the connection cannot be
                // reused anyway, and the next attempt sends the body's copy.
                abandonAttempt(CancellationError())
                return startNext(next)
            }
            phase = .discarding(then: next)
            return
        }
        phase = .responding
        replayBuffer = nil  // sent once more no more
        status = Int(head.status.code)
        let framing = handler.sendResponseHead(status: head.status, fields: head.fields, declaredLength: head.declaredLength, info: info)
        bodyless = framing.bodyless
        // Out at the end of the read that carried it: a slow first body part does not hold the status back.
        unflushed = true
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        guard case .responding = phase, !bodyless else { return }
        bytesOut += buffer.readableBytes
        handler.sendResponseBodyPart(buffer)
        unflushed = true
    }

    /// The parts of one upstream read go to the client in one flush.
    func upstreamReadComplete() {
        guard unflushed else { return }
        unflushed = false
        handler.flushResponse()
    }

    func upstreamResponseEnd() {
        switch phase {
        case .discarding(let next):
            writer = nil
            startNext(next)
        case .responding:
            phase = .finished
            releaseUpstream()
            log(status: status ?? 0, error: nil)
            info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: nil))
            handler.sendResponseEnd()
        default:
            break
        }
    }

    func upstreamExchangeFailed(_ error: any Error) {
        switch phase {
        case .attempting:
            attemptFailed(error)
        case .discarding(let next):
            // The discarded response did not end cleanly: the next attempt goes on anyway.
            writer = nil
            startNext(next)
        case .responding:
            fail(error)
        default:
            break
        }
    }

    /// The upstream answered the WebSocket handshake with 101: the exchange
    /// ends here (status 101) and the client connection becomes a tunnel to it.
    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        guard case .attempting = phase else { return tunnel.channel.close(promise: nil) }
        phase = .finished
        releaseUpstream()
        status = Int(head.status.code)
        log(status: Int(head.status.code), error: nil)
        handler.switchToWebSocket(head, tunnel: tunnel, info: info, url: routed.url)
    }

    var upstreamShouldPauseReading: Bool {
        if case .discarding = phase { return false }
        return !(handler.context?.channel.isWritable ?? true)
    }

    /// The exchange ends with `error`: a gateway error response, or, once the
    /// response started, a closed connection.
    func fail(_ error: any Error) {
        guard !finished else { return }
        phase = .finished
        releaseUpstream()
        let gatewayError = (error as? GatewayError) ?? GatewayError(.internalError, "the gateway failed to forward the request", cause: error)
        if gatewayError.code == .internalError {
            info.logger.error("forwarding failed", metadata: ["error": "\(error)"])
        }
        guard !handler.machine.responseStarted else {
            // Mid-response: the client sees the truncation as a closed connection.
            info.logger.info("\(ExchangeLogLine.text(of: info.method)) \(ExchangeLogLine.withoutQueryValues(routed.url)) aborted: \(gatewayError.code.rawValue)")
            info.finish(ExchangeOutcome(status: status, responseBytes: bytesOut, error: gatewayError.code))
            // Parts this read already gave go out before the close (a close drops unflushed writes).
            if unflushed {
                unflushed = false
                handler.flushResponse()
            }
            handler.machine.closeAfterWrite()
            handler.context?.close(promise: nil)
            return
        }
        let code = Int(gatewayError.status.code)
        log(status: code, error: gatewayError.code)
        info.finish(ExchangeOutcome(status: code, responseBytes: 0, error: gatewayError.code))
        handler.respond(gatewayError.response(), info: info, addVia: true, keepAlive: false)
    }

    func log(status: Int, error: GatewayError.Code?) {
        ExchangeLogLine.log(
            info.context, method: info.method, url: routed.url, status: status, started: info.started,
            bytesIn: bytesIn, bytesOut: bytesOut, upstream: request.upstreamName, error: error
        )
    }
}
