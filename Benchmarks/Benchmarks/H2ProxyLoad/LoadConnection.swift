// One client connection of H2ProxyLoad and the handlers of its pipeline:
// [ConnectTunnelHandler (with --proxy)] → NIOSSLClientHandler → ALPNCheck →
// NIOHTTP2Handler (client, inline multiplexer) → ConnectionWatcher; each
// stream a child channel with one LoadStreamHandler.
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOTLS

/// Keeps `plan.streams` streams busy on one connection until the deadline,
/// then waits for those in flight (up to `plan.grace`) and closes. A closed
/// connection is reopened after 100 ms (its streams and the close count as
/// errors). Everything runs on `eventLoop`.
final class LoadConnection {
    let plan: LoadPlan
    let eventLoop: any EventLoop
    private let done: EventLoopPromise<LoadStats>
    private var stats = LoadStats()
    private var channel: (any Channel)?
    /// Set once ALPN picked h2; until then the multiplexer waits in `pending`.
    private var multiplexer: NIOHTTP2Handler.StreamMultiplexer?
    private var pending: NIOHTTP2Handler.StreamMultiplexer?
    /// Counts connection attempts: events of an earlier connection are ignored.
    private var generation = 0
    private var inFlight = 0
    private var stopping = false
    private var finished = false
    /// The first thing that went wrong on the current connection, for its close's error.
    private var problem: String?

    init(plan: LoadPlan, eventLoop: any EventLoop) {
        self.plan = plan
        self.eventLoop = eventLoop
        self.done = eventLoop.makePromise(of: LoadStats.self)
    }

    /// Succeeds with the counts when the connection is done.
    var result: EventLoopFuture<LoadStats> { done.futureResult }

    /// Call on `eventLoop`.
    func start() {
        let loop = eventLoop.assumeIsolated()
        loop.scheduleTask(deadline: plan.deadline) { self.stop() }
        loop.scheduleTask(deadline: plan.deadline + plan.grace) { self.finish() }
        connect()
    }

    // MARK: Connection

    private func connect() {
        generation += 1
        let generation = self.generation
        let plan = self.plan
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(5))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connection = bound.value
                    if let authority = plan.tunnelAuthority {
                        try channel.pipeline.syncOperations.addHandler(ConnectTunnelHandler(
                            authority: authority,
                            established: { try connection.startTLS(on: channel, generation: generation) },
                            failed: { connection.noteProblem($0, generation: generation) }
                        ))
                    } else {
                        try connection.startTLS(on: channel, generation: generation)
                    }
                }
            }
            .connect(host: plan.connectHost, port: plan.connectPort)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let channel): self.connected(channel, generation: generation)
                case .failure(let error): self.connectFailed(error, generation: generation)
                }
            }
    }

    /// TLS (SNI, ALPN h2), then HTTP/2: right away with --direct, after the CONNECT's 2xx through a proxy.
    func startTLS(on channel: any Channel, generation: Int) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(NIOSSLClientHandler(context: plan.tls, serverHostname: plan.serverName))
        try pipeline.addHandler(ALPNCheck { negotiated in self.negotiated(negotiated, channel: channel, generation: generation) })
        pending = try pipeline.configureHTTP2Pipeline(
            mode: .client,
            connectionConfiguration: Self.connectionConfiguration,
            streamConfiguration: Self.streamConfiguration,
            inboundStreamInitializer: { stream in
                // Push is disabled in our SETTINGS.
                stream.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
            }
        )
        try pipeline.addHandler(ConnectionWatcher { problem in
            self.noteProblem(problem, generation: generation)
            channel.close(promise: nil)
        })
    }

    private func connected(_ channel: any Channel, generation: Int) {
        guard generation == self.generation, !finished else {
            channel.close(promise: nil)
            return
        }
        stats.connectionsOpened += 1
        self.channel = channel
        channel.closeFuture.assumeIsolated().whenComplete { _ in self.closed(generation: generation) }
    }

    private func connectFailed(_ error: any Error, generation: Int) {
        guard generation == self.generation else { return }
        record(error: "connect: \(error)")
        reconnectLater()
    }

    private func negotiated(_ protocolName: String?, channel: any Channel, generation: Int) {
        guard generation == self.generation, !finished else { return }
        guard protocolName == "h2" else {
            noteProblem("ALPN selected \(protocolName ?? "nothing"), not h2", generation: generation)
            channel.close(promise: nil)
            return
        }
        self.channel = channel
        multiplexer = pending
        pending = nil
        for _ in 0..<plan.streams { openStream() }
    }

    func noteProblem(_ text: String, generation: Int) {
        guard generation == self.generation, problem == nil else { return }
        problem = text
    }

    private func closed(generation: Int) {
        guard generation == self.generation else { return }
        channel = nil
        multiplexer = nil
        pending = nil
        if stopping {
            if inFlight == 0 { finish() }
            return
        }
        record(error: "connection closed" + (problem.map { ": \($0)" } ?? ""))
        problem = nil
        reconnectLater()
    }

    private func reconnectLater() {
        guard !stopping else { return }
        eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(100)) {
            if !self.stopping { self.connect() }
        }
    }

    // MARK: Streams

    private func openStream() {
        guard !stopping, let multiplexer, channel?.isActive == true else { return }
        inFlight += 1
        let handler = LoadStreamHandler(connection: self, generation: generation, started: .now())
        let bound = NIOLoopBound(handler, eventLoop: eventLoop)
        let promise = eventLoop.makePromise(of: (any Channel).self)
        multiplexer.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(bound.value)
            }
        }
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .failure:
                handler.end(error: "stream not opened")
            case .success(let stream):
                // Created while the connection was closing: never activated.
                if !stream.isActive {
                    handler.end(error: "stream not opened")
                    stream.close(promise: nil)
                }
            }
        }
    }

    /// A stream ended (answered, reset or closed); counted if it ended within
    /// the run, and the next one opens unless the run is over.
    func streamEnded(generation: Int, started: NIODeadline, status: Int?, bodyBytes: Int, error: String?) {
        inFlight -= 1
        let now = NIODeadline.now()
        if now <= plan.deadline, !finished {
            if let error {
                stats.errors[error, default: 0] += 1
            } else if let status {
                stats.responses[status, default: 0] += 1
                stats.latenciesMicros.append(UInt32(clamping: (now - started).nanoseconds / 1000))
                stats.bodyBytes += bodyBytes
            }
        }
        if stopping {
            if inFlight == 0 { finish() }
        } else if generation == self.generation {
            if error == nil {
                openStream()
            } else {
                // Not from inside the failure's call stack (a closing connection fails every stream).
                eventLoop.assumeIsolated().execute { self.openStream() }
            }
        }
    }

    private func record(error: String) {
        guard NIODeadline.now() <= plan.deadline, !finished else { return }
        stats.errors[error, default: 0] += 1
    }

    // MARK: The end

    private func stop() {
        stopping = true
        if inFlight == 0 { finish() }
    }

    private func finish() {
        guard !finished else { return }
        if inFlight > 0 { stats.errors["no answer within 5 s after the run", default: 0] += inFlight }
        finished = true
        channel?.close(promise: nil)
        done.succeed(stats)
    }

    static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: 100),
            HTTP2Setting(parameter: .enablePush, value: 0),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        configuration.targetWindowSize = 4 << 20
        return configuration
    }

    static var streamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var configuration = NIOHTTP2Handler.StreamConfiguration()
        configuration.targetWindowSize = 1 << 20
        return configuration
    }
}

/// One request: HEADERS (GET, END_STREAM) when the stream opens, then the
/// response's status and body bytes until END_STREAM, a reset or the close.
final class LoadStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: LoadConnection
    private let generation: Int
    private let started: NIODeadline
    private var status: Int?
    private var bodyBytes = 0
    private var ended = false

    init(connection: LoadConnection, generation: Int, started: NIODeadline) {
        self.connection = connection
        self.generation = generation
        self.started = started
    }

    func channelActive(context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: connection.plan.request, endStream: true))), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            // Interim (1xx) heads are skipped; the first final status counts.
            if status == nil, let code = frame.headers.first(name: ":status").flatMap({ Int($0) }), code >= 200 {
                status = code
            }
            if frame.endStream { end(error: status == nil ? "response without a status" : nil) }
        case .data(let frame):
            bodyBytes += frame.data.readableBytes
            if frame.endStream { end(error: status == nil ? "response without a status" : nil) }
        case .rstStream(let code):
            end(error: "stream reset: \(code)")
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            end(error: "stream reset: \(closed.errorCode)")
        } else {
            end(error: "stream error: \(type(of: error))")
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(error: "stream closed before its end")
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        end(error: "stream closed before its end")
    }

    /// Reports the stream once.
    func end(error: String?) {
        guard !ended else { return }
        ended = true
        connection.streamEnded(generation: generation, started: started, status: status, bodyBytes: bodyBytes, error: error)
    }
}

/// Sends `CONNECT authority HTTP/1.1` when the connection is up and reads the
/// answer's head: a 2xx calls `established` (which puts TLS after this
/// handler) and passes on any bytes after the head; from then on every read
/// passes through. Anything else calls `failed` and closes.
final class ConnectTunnelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let authority: String
    private let established: () throws -> Void
    private let failed: (String) -> Void
    private var head: ByteBuffer?
    private var open = false

    init(authority: String, established: @escaping () throws -> Void, failed: @escaping (String) -> Void) {
        self.authority = authority
        self.established = established
        self.failed = failed
    }

    func channelActive(context: ChannelHandlerContext) {
        let request = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: request)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !open else {
            context.fireChannelRead(data)
            return
        }
        var bytes = unwrapInboundIn(data)
        if var earlier = head {
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        guard let end = Self.endOfHead(in: bytes) else {
            head = bytes
            if bytes.readableBytes > 16 * 1024 {
                failed("CONNECT answer without an end of head")
                context.close(promise: nil)
            }
            return
        }
        head = nil
        let text = bytes.getString(at: bytes.readerIndex, length: end) ?? ""
        let words = text.split(separator: " ", maxSplits: 2)
        let code = words.count > 1 ? Int(words[1].prefix(while: { $0.isASCII && $0.isNumber })) : nil
        guard let code, (200..<300).contains(code) else {
            failed("CONNECT answered \(code.map { String($0) } ?? "something that is not HTTP")")
            context.close(promise: nil)
            return
        }
        open = true
        bytes.moveReaderIndex(forwardBy: end)
        do {
            try established()
        } catch {
            failed("TLS setup: \(error)")
            context.close(promise: nil)
            return
        }
        if bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
    }

    /// The offset just past CRLFCRLF (from the reader index), if the head is complete.
    static func endOfHead(in buffer: ByteBuffer) -> Int? {
        buffer.withUnsafeReadableBytes { raw -> Int? in
            guard raw.count >= 4 else { return nil }
            var i = 3
            while i < raw.count {
                if raw[i] == 10, raw[i - 1] == 13, raw[i - 2] == 10, raw[i - 3] == 13 { return i + 1 }
                i += 1
            }
            return nil
        }
    }
}

/// Between TLS and HTTP/2: tells the connection which protocol ALPN selected.
final class ALPNCheck: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let onHandshake: (String?) -> Void

    init(onHandshake: @escaping (String?) -> Void) {
        self.onHandshake = onHandshake
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = event {
            onHandshake(negotiated)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// After HTTP/2: the connection's GOAWAY and errors (TLS, protocol) close it, with the reason.
final class ConnectionWatcher: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private let onProblem: (String) -> Void

    init(onProblem: @escaping (String) -> Void) {
        self.onProblem = onProblem
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway(_, let code, _) = unwrapInboundIn(data).payload {
            onProblem("GOAWAY \(code)")
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        onProblem("\(error)")
    }
}
