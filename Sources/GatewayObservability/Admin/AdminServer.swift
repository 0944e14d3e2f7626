public import Logging
import GatewayConfig
import GatewayCore
public import NIOCore
import NIOHTTP1
import NIOPosix
public import ServiceLifecycle

/// The admin listener (a separate port from the proxy): `/` (stats page),
/// `/stats`, `/metrics`, `/traces`, `/traces.har`, `/healthz`, `/readyz`. Origin-form requests only.
public final class AdminServer: Service, Sendable {
    /// Answers an admin request: (status, content type, body).
    public typealias Route = @Sendable (_ method: String, _ path: String) async -> (status: Int, contentType: String, body: [UInt8])?

    private let host: String
    private let port: Int
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger
    private let routes: Route
    private let bound = OneShotValue<SocketAddress>()

    public init(host: String, port: Int, eventLoopGroup: any EventLoopGroup, logger: Logger, routes: @escaping Route) {
        self.host = host
        self.port = port
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.routes = routes
    }

    public func listeningAddress() async throws -> SocketAddress {
        try await bound.wait()
    }

    public func run() async throws {
        typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>
        let server: NIOAsyncChannel<Connection, Never>
        do {
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let failure = ListenFailure(listener: "admin", address: BindAddress(host: host, port: port).description, cause: error)
            bound.fail(failure)
            throw failure
        }
        let address = server.channel.localAddress!
        bound.succeed(address)
        logger.notice("admin listening on \(address.displayText) (/ page, /stats, /metrics, /traces, /traces.har, /healthz, /readyz)")
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        try? await connection.executeThenClose { inbound, outbound in
            var method = "GET"
            var path = "/"
            var keepAlive = true
            // Keep-alive clients (a Prometheus scraper) must not hold up a shutdown:
            // the loop ends at the next request boundary once it starts.
            for try await part in inbound.cancelOnGracefulShutdown() {
                switch part {
                case .head(let head):
                    method = "\(head.method)"
                    path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "/")
                    keepAlive = head.isKeepAlive
                case .body:
                    continue
                case .end:
                    let answer = await routes(method, path) ?? (404, "application/json", Array("{\"error\":\"not_found\"}\n".utf8))
                    var headers = HTTPHeaders()
                    headers.add(name: "Content-Type", value: answer.contentType)
                    headers.add(name: "Content-Length", value: String(answer.body.count))
                    headers.add(name: "Cache-Control", value: "no-store")
                    if !keepAlive { headers.add(name: "Connection", value: "close") }
                    let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: answer.status), headers: headers)
                    try await outbound.write(contentsOf: [
                        .head(head), .body(.byteBuffer(ByteBuffer(bytes: answer.body))), .end(nil),
                    ])
                    if !keepAlive { return }
                }
            }
        }
    }
}
