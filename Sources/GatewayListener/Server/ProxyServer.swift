public import GatewayCore
public import Logging
public import NIOCore
import NIOPosix
public import ServiceLifecycle

/// The proxy listener: accepts client connections and serves each with its
/// pipeline's handlers on its event loop (``ProxyChannelSetup``), at most
/// `limits.max_client_connections` at once. On graceful shutdown it stops accepting, closes
/// idle connections, lets busy ones finish for up to the drain timeout, then
/// closes whatever is left.
public final class ProxyServer: Service, Sendable {
    private let liveConfig: LiveConfig
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let tracker: ConnectionTracker
    private let requestIDs = RequestIDGenerator()
    private let bound = OneShotValue<SocketAddress>()
    /// The gateway's own listeners: never a `CONNECT` target.
    private let ownListeners: OwnListeners

    public init(
        liveConfig: LiveConfig, eventLoopGroup: any EventLoopGroup, logger: Logger, events: any GatewayEvents = NoGatewayEvents(),
        ownListeners: OwnListeners = OwnListeners()
    ) {
        self.tracker = ConnectionTracker(events: events, logger: logger)
        self.ownListeners = ownListeners
        self.liveConfig = liveConfig
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// The address the listener is bound to, once it is (port 0 resolves here).
    public func listeningAddress() async throws -> SocketAddress {
        try await bound.wait()
    }

    /// The bound address, without waiting: nil until the listener is bound.
    public var boundAddress: SocketAddress? { bound.value }

    /// Open client connections.
    public var connectionCount: Int { tracker.count }

    public func run() async throws {
        let config = liveConfig.current.config
        let limits = config.limits
        let setup = ProxyChannelSetup(
            maxHeadBytes: limits.maxHeadBytes,
            timeouts: ClientTimeoutStateMachine.Limits(limits),
            environment: ClientConnectionEnvironment(
                liveConfig: liveConfig, tracker: tracker, logger: logger, requestIDs: requestIDs, maxHeadBytes: limits.maxHeadBytes,
                ownListeners: ownListeners, flushBatches: LoopFlushBatches()
            )
        )
        let server: any Channel
        do {
            // Each connection is served by its pipeline's handlers on its event
            // loop: no task per connection or per request.
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(ChannelOptions.backlog, value: 1024)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
                .childChannelOption(ChannelOptions.maxMessagesPerRead, value: 16)
                // Half of `limits.response_buffer`; the upstream's reads take the other half.
                .childChannelOption(ChannelOptions.writeBufferWaterMark, value: Self.writeBuffer(limits.responseBuffer))
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture { try setup.configure(channel) }
                }
                .bind(host: config.listen.proxy.host, port: config.listen.proxy.port)
                .get()
        } catch {
            let failure = ListenFailure(listener: "proxy", address: "\(config.listen.proxy)", cause: error)
            bound.fail(failure)
            throw failure
        }
        // Last on the listening channel, after NIO's accept handler: a connection
        // that could not be set up, or a failed accept, is counted and logged.
        let (events, logger) = (tracker.events, logger)
        try? await server.eventLoop.submit {
            try server.pipeline.syncOperations.addHandler(AcceptFailureReporter(events: events, logger: logger))
        }.get()
        let address = server.localAddress!
        bound.succeed(address)
        logger.notice("proxy listening on \(address.displayText)", metadata: ["address": "\(address.displayText)"])

        let drainTimeout = limits.drainTimeout
        await withGracefulShutdownHandler {
            try? await server.closeFuture.get()
            // In-flight exchanges finish (or meet the drain timeout) before the service ends.
            await tracker.waitUntilEmpty()
        } onGracefulShutdown: { [tracker, logger] in
            logger.notice("draining: no new connections; waiting up to \(drainTimeout) for in-flight requests")
            server.close(promise: nil)
            tracker.beginDraining()
            Task {
                try? await Task.sleep(for: drainTimeout)
                guard tracker.count > 0 else { return }
                logger.warning("drain timeout: answering 503 to the requests still in flight on \(tracker.count) connection(s), then closing")
                tracker.abortAll()
                // Whatever has not ended a moment later is closed.
                try? await Task.sleep(for: .seconds(1))
                if tracker.count > 0 { tracker.closeAll() }
            }
        }
        logger.notice("proxy stopped")
    }

    /// `ip:port` of a client, for logs.
    static func describe(_ address: SocketAddress?) -> String {
        address.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "unknown"
    }

    /// A client connection stops being writable (and its exchange pauses the
    /// upstream's reads) once half of `responseBuffer` waits to be sent; it is
    /// writable again below a quarter.
    static func writeBuffer(_ responseBuffer: Int) -> ChannelOptions.Types.WriteBufferWaterMark {
        ChannelOptions.Types.WriteBufferWaterMark(low: responseBuffer / 4, high: responseBuffer / 2)
    }
}
