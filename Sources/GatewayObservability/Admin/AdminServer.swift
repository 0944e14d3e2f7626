public import Logging
import GatewayConfig
import GatewayCore
public import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle

/// The admin listener (a separate port from the proxy): `/` (stats page),
/// `/stats`, `/metrics`, `/traces`, `/traces.har`, `/injection`, `/healthz`, `/readyz`. Origin-form requests only.
///
/// It answers GET and HEAD for the `Host` names that are its own, and POST
/// to the injection switch from a client that is not a browser page
/// (``AdminRequestPolicy``: others get 421, 403 or 405), closes a
/// request that does not arrive within the header timeout and an idle
/// connection (``AdminTimeoutHandler``), and keeps at most
/// ``Options/maxConnections`` connections open: new ones beyond are closed at once.
public final class AdminServer: Service, Sendable {
    /// Answers an admin request: (status, content type, body).
    public typealias Route = @Sendable (_ request: AdminRequest) async -> (status: Int, contentType: String, body: [UInt8])?

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private let host: String
    private let port: Int
    private let options: Options
    private let policy: AdminRequestPolicy
    private let slots: AdminConnectionSlots
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let routes: Route
    private let bound = OneShotValue<SocketAddress>()

    public init(
        host: String, port: Int, options: Options = Options(), eventLoopGroup: any EventLoopGroup, logger: Logger,
        routes: @escaping Route
    ) {
        self.host = host
        self.port = port
        self.options = options
        self.policy = AdminRequestPolicy(bindHost: host, allowedHosts: options.allowedHosts)
        self.slots = AdminConnectionSlots(limit: options.maxConnections)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.routes = routes
    }

    public func listeningAddress() async throws -> SocketAddress {
        try await bound.wait()
    }

    /// Open admin connections.
    public var connectionCount: Int { slots.open }

    public func run() async throws {
        let headerTimeout = TimeAmount(options.headerTimeout)
        let idleTimeout = TimeAmount(options.idleTimeout)
        let server: NIOAsyncChannel<Connection, Never>
        do {
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Timeouts first (raw bytes), then HTTP, then the marker that reports exchanges to them.
                        let timeouts = AdminTimeoutHandler(headerTimeout: headerTimeout, idleTimeout: idleTimeout)
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(timeouts)
                        try sync.configureHTTPServerPipeline()
                        try sync.addHandler(AdminExchangeMarker(timeouts: timeouts))
                        // Closed when dropped: a connection accepted as the listener
                        // shuts down never reaches the loop below, and a dropped
                        // wrapper that must be finished by hand traps.
                        return try Connection(synchronouslyWrapping: channel)
                    }
                }
        } catch {
            let failure = ListenFailure(listener: "admin", address: BindAddress(host: host, port: port).description, cause: error)
            bound.fail(failure)
            throw failure
        }
        let address = server.channel.localAddress!
        bound.succeed(address)
        logger.notice("admin listening on \(address.displayText) (/ page, /stats, /metrics, /traces, /traces.har, /injection, /healthz, /readyz)")
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        guard self.admit() else {
                            // Closed at once, through the wrapper: a dropped NIOAsyncChannel traps.
                            group.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        group.addTask {
                            defer { self.slots.release() }
                            await self.serve(connection)
                        }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    /// Takes a slot for a new connection; at the cap, false (the caller closes
    /// it at once) and a line in the log (the first time, then every 1,000th).
    private func admit() -> Bool {
        switch slots.take() {
        case .admitted:
            return true
        case .refused(let total):
            if total == 1 || total % 1000 == 0 {
                logger.warning(
                    "admin listener: \(options.maxConnections) connections open, new ones are closed at once (\(total) so far)"
                )
            }
            return false
        }
    }

    static let notFound: Answer = (404, "application/json", Array("{\"error\":\"not_found\"}\n".utf8))

    private func serve(_ connection: Connection) async {
        let localAddress = connection.channel.localAddress?.ipAddress
        try? await connection.executeThenClose { inbound, outbound in
            var request = AdminRequest(method: "GET", path: "/")
            var keepAlive = true
            // Keep-alive clients (a Prometheus scraper) must not hold up a shutdown:
            // the loop ends at the next request boundary once it starts.
            for try await part in inbound.cancelOnGracefulShutdown() {
                switch part {
                case .head(let head):
                    request = AdminRequest(head)
                    keepAlive = head.isKeepAlive
                    if let refusal = self.policy.refusal(request, hostFields: head.headers["Host"], localAddress: localAddress) {
                        // Answered at once, without reading a body; the connection closes.
                        try await Self.write(refusal, headOnly: request.method == "HEAD", to: outbound)
                        return
                    }
                case .body:
                    continue
                case .end:
                    let answer: Answer = await self.routes(request) ?? Self.notFound
                    try await Self.write(answer, headOnly: request.method == "HEAD", keepAlive: keepAlive, to: outbound)
                    if !keepAlive { return }
                }
            }
        }
    }
}
