// What the two floors share (NIOProxyFloor, NIOByteFloor): the listener, and the
// one upstream connection per client connection, opened on its first request
// with the parts written before it connects held until it does.
import NIOCore
import NIOPosix

/// The upstream connection of one client connection; `Part` is what is written to it.
public final class UpstreamSlot<Part: Sendable> {
    private var channel: (any Channel)?
    private var pending: [Part] = []
    private var connecting = false

    public init() {}

    /// Writes `part` (flushed when `flush`), connecting to `host:port` first when
    /// there is no connection yet; `configure` sets up the new connection's pipeline.
    public func send(
        _ part: Part, flush: Bool, context: ChannelHandlerContext, host: String, port: Int,
        configure: @escaping @Sendable (any Channel) throws -> Void
    ) {
        if let channel {
            if flush { channel.writeAndFlush(part, promise: nil) } else { channel.write(part, promise: nil) }
            return
        }
        pending.append(part)
        guard !connecting else { return }
        connecting = true
        let client = context.channel
        let slot = NIOLoopBound(self, eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try configure(channel) } }
            .connect(host: host, port: port)
            .whenComplete { result in
                let slot = slot.value
                switch result {
                case .success(let channel):
                    slot.channel = channel
                    for part in slot.pending { channel.write(part, promise: nil) }
                    channel.flush()
                    slot.pending = []
                case .failure:
                    client.close(promise: nil)
                }
            }
    }

    public func flush() { channel?.flush() }

    public func close() { channel?.close(promise: nil) }
}

/// Serves 127.0.0.1:PORT (the first argument, else `defaultPort`) on one event
/// loop per core; `configure` sets up each client connection's pipeline. Never returns.
public func serveFloor(name: String, defaultPort: Int, configure: @escaping @Sendable (any Channel) throws -> Void) throws {
    let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? defaultPort : defaultPort
    let group = MultiThreadedEventLoopGroup(numberOfThreads: System.coreCount)
    let server = try ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 4096)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try configure(channel) } }
        .bind(host: "127.0.0.1", port: port).wait()
    print("\(name) on \(server.localAddress!)")
    try server.closeFuture.wait()
}
