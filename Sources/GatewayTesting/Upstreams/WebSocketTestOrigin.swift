import NIOConcurrencyHelpers
import NIOCore
public import NIOHTTP1
import NIOPosix
public import NIOSSL
import NIOWebSocket

/// A real WebSocket origin on 127.0.0.1 (a random port) for integration
/// tests, on NIOWebSocket: the handshake on any path is answered 101 (with
/// the first subprotocol the client offers), unless the `verdict` given to
/// ``start(tls:refuse:verdict:)`` answers it with a status instead. Text and binary messages are echoed frame
/// by frame, pings answered, a close answered and the connection closed.
/// Every handshake's request head is recorded (``handshakes``).
public final class WebSocketTestOrigin: Sendable {
    public let port: Int
    /// Whether it speaks TLS (`wss://`).
    public let isTLS: Bool
    private let channel: any Channel
    private let heads: NIOLockedValueBox<[HTTPRequestHead]>
    private let connections: NIOLockedValueBox<[any Channel]>

    private init(port: Int, isTLS: Bool, channel: any Channel, heads: NIOLockedValueBox<[HTTPRequestHead]>, connections: NIOLockedValueBox<[any Channel]>) {
        self.port = port
        self.isTLS = isTLS
        self.channel = channel
        self.heads = heads
        self.connections = connections
    }

    /// The handshakes received so far (answered or refused), in order.
    public var handshakes: [HTTPRequestHead] { heads.withLockedValue { $0 } }

    /// Binds 127.0.0.1 port 0; `tls` for `wss://`; `refuse` answers every
    /// handshake with that status; `verdict` decides per handshake (nil: 101).
    public static func start(
        tls: NIOSSLContext? = nil,
        refuse: HTTPResponseStatus? = nil,
        verdict: (@Sendable (HTTPRequestHead) -> HTTPResponseStatus?)? = nil
    ) async throws -> WebSocketTestOrigin {
        let decide: @Sendable (HTTPRequestHead) -> HTTPResponseStatus? = { head in refuse ?? verdict?(head) }
        let heads = NIOLockedValueBox<[HTTPRequestHead]>([])
        let connections = NIOLockedValueBox<[any Channel]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    connections.withLockedValue { $0.append(channel) }
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    // Answers what did not upgrade; leaves when the connection becomes a WebSocket.
                    let refusing = NIOLoopBound(RefusingHandler(decide: decide), eventLoop: channel.eventLoop)
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 24,
                        shouldUpgrade: { channel, head in
                            heads.withLockedValue { $0.append(head) }
                            guard decide(head) == nil else { return channel.eventLoop.makeSucceededFuture(nil) }
                            var headers = HTTPHeaders()
                            if let offered = head.headers["sec-websocket-protocol"].first?.split(separator: ",").first {
                                headers.add(name: "Sec-WebSocket-Protocol", value: offered.trimmingCharacters(in: .whitespaces))
                            }
                            return channel.eventLoop.makeSucceededFuture(headers)
                        },
                        upgradePipelineHandler: { channel, _ in
                            channel.pipeline.syncOperations.removeHandler(refusing.value).flatMapThrowing {
                                try channel.pipeline.syncOperations.addHandler(WebSocketEchoHandler())
                            }
                        }
                    )
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in })
                    )
                    try channel.pipeline.syncOperations.addHandler(refusing.value)
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestUpstreamError.noLocalAddress
        }
        return WebSocketTestOrigin(port: port, isTLS: tls != nil, channel: channel, heads: heads, connections: connections)
    }

    /// Connections still open (the origin's side of every WebSocket).
    public var openConnections: Int {
        connections.withLockedValue { $0 }.filter(\.isActive).count
    }

    /// Closes every WebSocket from the origin's side (TCP close, no close frame).
    public func dropConnections() {
        for connection in connections.withLockedValue({ $0 }) { connection.close(promise: nil) }
    }

    public var url: String { "\(isTLS ? "wss" : "ws")://127.0.0.1:\(port)" }

    public func shutdown() async throws {
        dropConnections()
        try await channel.close()
    }
}

/// Echoes data frames as they come (fragments too), answers pings and closes.
private final class WebSocketEchoHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            context.write(wrapOutboundOut(WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)), promise: nil)
        case .ping:
            context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)), promise: nil)
        case .connectionClose:
            let echo = WebSocketFrame(fin: true, opcode: .connectionClose, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(echo)).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            break
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// Answers a request that did not upgrade (a refused handshake, a plain GET).
private final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart
    let decide: @Sendable (HTTPRequestHead) -> HTTPResponseStatus?
    private var status = HTTPResponseStatus.upgradeRequired

    init(decide: @escaping @Sendable (HTTPRequestHead) -> HTTPResponseStatus?) {
        self.decide = decide
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data) { status = decide(head) ?? .upgradeRequired }
        guard case .end = unwrapInboundIn(data) else { return }
        let body = "no websocket here\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
