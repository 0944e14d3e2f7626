import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// One request/response exchange, protocol-neutral: the route's retry planner
/// and attempt steps (rate limit, token, credential), then attempts through
/// the transport, the request body passed upstream as it arrives (one write in
/// flight; the client's reads held meanwhile) and the response passed to the
/// client as it arrives (the upstream's reads held while the client cannot
/// take more). It reaches its client only through ``ExchangeClient`` and its
/// upstream only through ``UpstreamTransport``; its progress is an
/// ``ExchangeStateMachine``.
///
/// Everything runs on the client's event loop. It waits only when a policy
/// must: a step's future (an upstream's pause, a queue slot, a token refresh,
/// which complete on other loops and are hopped back) or a retry's backoff (a
/// scheduled task). No task, no continuation, no buffer beyond one read, but
/// the copy of a body that may be sent again (``RequestReplayBuffer``).
///
/// Its decisions are the machine's; the attempts are in `+Attempts.swift`,
/// the machine's actions performed in `+Actions.swift`.
final class Exchange: UpstreamAttemptDelegate {
    let client: any ExchangeClient
    let info: ExchangeInfo
    /// The request of the attempt in flight (steps add credentials to a copy of `routed`).
    var request: ProxyRequest
    /// The request as routed, kept apart only on a route whose steps or
    /// retries may change `request`; on the others `request` is never changed
    /// and is the routed request (no second copy per exchange). Boxed: inline,
    /// its room took the exchange past 1,032 bytes, the largest allocation
    /// glibc serves from its per-thread cache.
    private let original: OriginalRequest?
    /// The request as routed, before steps added credentials: what logs name.
    var routed: ProxyRequest { original?.request ?? request }
    /// Whether ``routed`` has no body, read in place (``routed`` is a copy).
    var routedBodyLengthIsZero: Bool { original?.request.bodyLengthIsZero ?? request.bodyLengthIsZero }
    /// ``routed``'s URL in parts, for the log line: read in place, not copied out.
    var routedTarget: ExchangeLine.Target {
        if let original { return ExchangeLine.Target(original.request) }
        return ExchangeLine.Target(request)
    }
    let route: UpstreamRoute
    let transport: any UpstreamTransport
    let eventLoop: any EventLoop
    var machine = ExchangeStateMachine()
    /// A step's wait in progress (withdrawn if the exchange stops waiting).
    var pendingWait: AttemptWait?
    var backoff: Scheduled<Void>?
    /// Forwards the callbacks of the attempt in flight (requests that may be sent
    /// again only: a given-up attempt's late callbacks must not reach the next one).
    var attemptDelegate: AttemptDelegate?
    /// The attempt's `per_try_timeout` or the request's deadline, whichever
    /// comes first (``handleScheduledCallback(eventLoop:)`` when it passes).
    var attemptTimer: NIOScheduledCallback?
    var attemptLimit: (at: StoredInstant, perTry: Duration?)?
    var cancellation: UpstreamAttemptCancellation?
    var writer: (any UpstreamRequestWriter)?
    /// The request body's way upstream (a pure state machine).
    var body: RequestBodyForwarding
    /// The upstream response's trailer fields, written with its end.
    var trailers: HTTPHeaders?

    init(client: any ExchangeClient, info: ExchangeInfo, request: consuming ProxyRequest, route: UpstreamRoute, transport: any UpstreamTransport, eventLoop: any EventLoop) {
        self.client = client
        self.info = info
        self.body = RequestBodyForwarding(declaredLength: request.body.declaredLength, bodyless: request.bodyLengthIsZero)
        self.original = route.steps.isEmpty && route.retry == nil ? nil : OriginalRequest(copy request)
        self.request = request  // moved in, not copied
        self.route = route
        self.transport = transport
        self.eventLoop = eventLoop
    }

    var finished: Bool { machine.isFinished }

    // MARK: Request side (from the client)

    /// Once the whole request is in, reads go on (what follows is the next
    /// request, which the connection queues): holding them would cost two
    /// `epoll_ctl` calls per request.
    var wantsRequestBody: Bool {
        finished || body.wantsMore(writerReady: writer != nil)
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        let action = machine.requestBodyPart(buffer, retryDelay: { self.retryDelay(after: $0, run: &$1) })
        info.observeRequestBody(buffer)
        body.received(buffer)
        pump()
        perform(action)
    }

    func requestEnd() {
        let action = machine.requestEnded(retryDelay: { self.retryDelay(after: $0, run: &$1) })
        body.ended()
        armAttemptTimerOnceRequestIsIn()
        pump()
        perform(action)
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
            self.client.requestBodyDemand()
        }
        // A failed write fails the exchange in the upstream handler, which tells us.
    }

    /// The client can take more of the response: a held upstream read goes.
    func clientWritable() {
        writer?.resumeReading()
    }

    /// The client went away (or its connection failed): whatever is under way stops.
    func cancel() {
        guard let pending = machine.cancel() else { return }
        withdraw(pending)
        abortAttempt(CancellationError())
        releaseUpstream()
        info.finish(ExchangeOutcome(status: machine.status, responseBytes: machine.bytesOut, error: nil, cancelled: true))
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
        pendingWait = nil
        backoff = nil
        body.reset()
    }

    // MARK: Response side (from the upstream)

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        guard machine.isAttempting else { return writer.abort(CancellationError()) }
        self.writer = writer
        if !body.endSent { sendContinueIfAwaited() }
        pump()
        client.requestBodyDemand()
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        guard machine.isAttempting else { return }
        attemptTimer?.cancel()
        attemptTimer = nil
        switch verdict(on: head) {
        case .forward:
            info.observeResponseHead(status: head.status, fields: head.fields, via: RequestRouter.responseVia)
            let writesBody = client.writeResponseHead(head, info: info)
            machine.responding(status: Int(head.status.code), bodyless: !writesBody)
        case .discard:
            return
        case .abandon(let next):
            // Answered before the whole body went: the connection cannot be
            // reused anyway, and the next attempt sends the body's copy.
            abortAttempt(CancellationError())
            perform(next)
        }
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        guard machine.responseBodyPart(buffer.readableBytes) else { return }
        client.writeResponseBodyPart(buffer)
    }

    /// The parts of one upstream read go to the client in one flush.
    func upstreamReadComplete() {
        if machine.takeUnflushed() { client.flushResponse() }
    }

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        guard machine.isForwardingBody else { return }
        self.trailers = trailers
    }

    func upstreamResponseEnd() {
        switch machine.responseEnded() {
        case .next(let next):
            perform(next)
        case .finish:
            releaseUpstream()
            log(status: machine.status ?? 0, error: nil)
            info.finish(ExchangeOutcome(status: machine.status, responseBytes: machine.bytesOut, error: nil))
            client.writeResponseEnd(trailers: trailers)
        case .ignore:
            break
        }
    }

    func upstreamAttemptFailed(_ error: any Error) {
        perform(machine.upstreamFailed(error, retryDelay: { self.retryDelay(after: $0, run: &$1) }))
    }

    /// The upstream answered the WebSocket handshake with 101: the exchange
    /// ends here (status 101) and the client's side becomes a tunnel to it.
    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        guard machine.upgraded(status: Int(head.status.code)) else { return tunnel.channel.close(promise: nil) }
        releaseUpstream()
        info.observeResponseHead(status: head.status, fields: head.fields, via: RequestRouter.responseVia)
        info.finish(ExchangeOutcome(status: Int(head.status.code), responseBytes: 0, error: nil))
        log(status: Int(head.status.code), error: nil)
        client.switchToTunnel(after: head, tunnel: tunnel, info: info, url: routed.url)
    }

    var upstreamShouldPauseReading: Bool {
        machine.pausesUpstream(clientWritable: client.isWritable)
    }

    func log(status: Int, error: GatewayError.Code?) {
        // Asked of the info first: passing its context on copied it (a retain per field) for a line not logged.
        guard info.logsExchangeLine else { return }
        ExchangeLogLine.log(
            info.context, method: info.method, target: routedTarget, status: status, started: info.started,
            bytesIn: machine.bytesIn, bytesOut: machine.bytesOut, upstream: request.upstreamName, error: error,
            injected: route.injects ? info.context.record.injectedResponse?.description : nil
        )
    }
}

/// An exchange's request as routed, kept apart from the one its steps change.
final class OriginalRequest {
    let request: ProxyRequest

    init(_ request: ProxyRequest) {
        self.request = request
    }
}
