import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

/// The proxy side of a client connection, the only handler of its pipeline:
/// frames requests from the bytes read (``HTTP1RequestFramer``), reads them
/// in order (keep-alive, pipelining), refuses what must be refused, and runs
/// each exchange on the event loop: the exchange hands parts between this
/// channel and a pooled upstream channel, with back-pressure by holding
/// `read()` on either side. `CONNECT` hands the connection to a tunnel or to
/// interception. Its protocol state is ``ClientConnectionStateMachine``.
final class ClientConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler, ClientTimeoutOwner, ExchangeHolder {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// Largest leftover request body read and discarded to keep a connection alive.
    static let drainLimit = 64 * 1024

    let environment: ClientConnectionEnvironment
    let timeouts: ClientTimeouts
    /// Frames requests from the bytes read; after an upgrade-like request it
    /// keeps what follows for whoever takes the connection over.
    var framer: HTTP1RequestFramer
    /// The connection was handed over (a tunnel, interception's TLS, HTTP/2):
    /// no more parts are framed on this pass.
    var framingStopped = false
    /// Set inside an intercepted `CONNECT`: every request goes there over TLS.
    var origin: InterceptedOrigin?
    var machine = ClientConnectionStateMachine()
    var context: ChannelHandlerContext?
    var exchange: Exchange?
    /// The request in flight, for answers the handler writes itself.
    var current: ExchangeInfo?
    private var pipelined = CircularBuffer<ClientRequestPart>()
    private var heldRead = false
    private var discardedBytes = 0
    /// Frames and writes the responses, and batches their flushes.
    let writer = HTTP1ResponseWriter()
    /// The last write of a response, kept only when the connection may close after it.
    var lastWrite: EventLoopFuture<Void>?
    var trackingID: Int?
    /// Idle or busy, for the connection caps (``ConnectionTracker``).
    let idle = ConnectionIdleMark()
    /// Closed to admit another connection at a cap: it ends after the exchange in flight.
    var evicted = false
    var clientAddress = "unknown"

    init(environment: ClientConnectionEnvironment, timeouts: ClientTimeouts, maxHeadBytes: Int) {
        self.environment = environment
        self.timeouts = timeouts
        self.framer = HTTP1RequestFramer(maxHeadBytes: maxHeadBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        writer.attach(context, flushBatch: environment.flushBatches?.batch(for: context.eventLoop))
        clientAddress = ProxyServer.describe(context.channel.remoteAddress)
        timeouts.attach(context, owner: self)
        if context.channel.isActive { register(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeouts.detach()
        writer.detach()  // nothing written stays behind in the channel
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        timeouts.connected()
        register(context)
        context.fireChannelActive()
    }

    /// Tracks the connection for graceful shutdown, until its channel closes (a tunnel outlives this handler).
    private func register(_ context: ChannelHandlerContext) {
        guard trackingID == nil else { return }
        let limits = environment.liveConfig.current.config.limits
        let client = context.channel.remoteAddress?.ipAddress ?? "unknown"
        idle.idle(at: context.eventLoop.now)  // until its first request arrives
        guard let id = environment.tracker.add(
            context.channel, client: client, idle: idle, limit: limits.maxClientConnections, perClientLimit: limits.maxConnectionsPerClient
        ) else {
            context.close(promise: nil)
            return
        }
        trackingID = id
        let tracker = environment.tracker
        context.channel.closeFuture.whenComplete { _ in tracker.remove(id) }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        environment.tracker.setCallbacks(id, ConnectionTracker.Callbacks(
            drain: { handler.eventLoop.execute { handler.value.drainRequested() } },
            abort: { handler.eventLoop.execute { handler.value.drainTimedOut() } },
            evict: { handler.eventLoop.execute { handler.value.evictRequested() } }
        ))
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeouts.channelClosed()
        machine.closed()
        cancelExchange()
        context.fireChannelInactive()
    }

    // MARK: Inbound

    /// Frames what was read and handles each part, until the bytes run out or
    /// the connection is handed over. A malformed head or body goes to
    /// ``errorCaught(context:error:)`` as the error the client is answered with.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        timeouts.bytesRead()
        framer.append(unwrapInboundIn(data))
        do {
            while !framingStopped, let part = try framer.next() {
                handle(part)
            }
        } catch {
            errorCaught(context: context, error: error)
        }
    }

    /// A timeout of ``timeouts`` expired: answered as any error of the connection.
    func timedOut(_ error: GatewayError) {
        guard let context else { return }
        errorCaught(context: context, error: error)
    }

    /// Stops framing and takes the bytes the client sent after its last
    /// (upgrade-like) request, for whoever takes the connection over.
    func stopFraming() -> ByteBuffer? {
        framingStopped = true
        return framer.takeUnparsed()
    }

    private func handle(_ part: ClientRequestPart) {
        switch part {
        case .head(let head), .headWithBody(let head, _), .refused(let head, _):
            switch machine.requestHead(keepAlive: head.keepsConnection) {
            case .start:
                guard let verdict = part.verdict else { return }
                // A refused head's request stops here: no body follows it.
                timeouts.headReceived(bodyFollows: part.announcesBody)
                idle.busy()
                discardedBytes = 0
                startExchange(head, framing: verdict)
            case .queue:
                pipelined.append(part)
            case .forward, .discard, .ignore:
                break
            }
        case .body(let buffer):
            switch machine.requestBody() {
            case .forward:
                exchange?.requestBodyPart(buffer)
            case .discard:
                discardedBytes += buffer.readableBytes
                if discardedBytes > Self.drainLimit, let context { close(context) }
            case .queue:
                pipelined.append(part)
            case .start, .ignore:
                break
            }
        case .end:
            timeouts.requestEnded()
            switch machine.requestEnd() {
            case .forward:
                exchange?.requestEnd()
            case .queue:
                pipelined.append(part)
            case .exchangeDone(let keepAlive):
                exchangeDone(keepAlive: keepAlive)
            case .awaitRequestEnd, .ignore:
                break
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        let gatewayError: GatewayError
        if let error = error as? GatewayError {
            gatewayError = error
        } else {
            environment.logger.debug("client connection error", metadata: ["error": "\(error)"])
            close(context)
            return
        }
        // A malformed head, or a body cut by a framing error: answer if nothing went out yet.
        cancelExchange()
        if gatewayError.code == .sendTimeout {
            // Nothing can reach a client that does not read: close without a word.
            environment.logger.info("closed connection: \(gatewayError.code.rawValue)", metadata: ["client": "\(clientAddress)"])
            machine.closeAfterWrite()
            close(context)
            return
        }
        if machine.responseStarted && !machine.isIdle {
            machine.closeAfterWrite()
            close(context)
            return
        }
        environment.logger.info("refused request: \(gatewayError.code.rawValue)", metadata: ["client": "\(clientAddress)"])
        machine.closeAfterWrite()
        writeFinal(gatewayError.response(), method: current?.method ?? .GET, version: current?.version ?? .http1_1)
    }

    // MARK: Outbound

    /// Reads go on while the exchange takes request body (or its request is
    /// complete) and no pipelined request waits: at most one read of pipelined
    /// parts is ever queued.
    private var mayRead: Bool {
        machine.allowsRead && pipelined.isEmpty && (exchange?.wantsRequestBody ?? true)
    }

    func read(context: ChannelHandlerContext) {
        if mayRead {
            context.read()
        } else {
            if !heldRead { timeouts.readsHeld(true) }
            heldRead = true
        }
    }

    /// An exchange can take request body again (or the connection is idle): let a held read go.
    func resumeReading() {
        guard heldRead, let context, mayRead else { return }
        heldRead = false
        timeouts.readsHeld(false)
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        timeouts.writabilityChanged(writable: writable)
        if writable { exchange?.clientWritable() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Ending exchanges

    /// The exchange in flight is over (request and response complete).
    func exchangeDone(keepAlive: Bool) {
        exchange = nil
        current = nil
        timeouts.exchangeFinished()
        let draining = environment.tracker.isDraining
        guard keepAlive else { return }  // the close follows the last write (see `writeResponseEnd`)
        guard !draining, !evicted else {
            machine.closeAfterWrite()
            closeWhenWritten(lastWrite)
            return
        }
        if let context { idle.idle(at: context.eventLoop.now) }
        // Parts of the next request that came with the last read (those of a
        // request after it are queued again).
        if !pipelined.isEmpty {
            let parts = pipelined
            pipelined = []
            for part in parts { handle(part) }
        }
        resumeReading()
    }
}
