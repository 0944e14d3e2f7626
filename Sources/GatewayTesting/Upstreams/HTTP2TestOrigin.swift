import NIOConcurrencyHelpers
import NIOCore
public import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A real HTTP/2 origin on 127.0.0.1 (a random port) for integration tests, on
/// NIOHTTP2: TLS with the ALPN protocols given (`["h2"]`, or
/// `["h2", "http/1.1"]` to serve HTTP/1.1 clients too), or prior-knowledge h2c
/// without TLS. Each stream (each request of an HTTP/1.1 connection) goes
/// through `HTTP2FramePayloadToHTTP1ServerCodec` to one handler
/// (`+Handler.swift`), which answers every path with 200 and echoes the
/// request in headers: `x-method`, `x-path`, `x-authority` (`:authority`, or
/// `Host` over HTTP/1.1), `x-echo` (the request's own `x-echo`), `x-protocol`
/// (`h2` or `http/1.1`); the body is `method path\n`. Paths:
/// - `/delay/{ms}`: answers after that long.
/// - `/trailers`: a body, then trailers `grpc-status: 0` and `x-trailer: done` (over HTTP/2).
/// - `/bytes/{n}`: `n` bytes of `x`.
/// - `/wrong-length/{declared}/{sent}`: `content-length: declared` and `sent`
///   bytes of `x` (a broken origin: its NIOHTTP2 does not check what it sends).
///
/// Counts accepted connections and the most requests in flight at once, and
/// records every request.
public final class HTTP2TestOrigin: Sendable {
    /// One request as the origin saw it.
    public struct Request: Sendable {
        public let method: HTTPMethod
        public let path: String
        public let headers: HTTPHeaders
        /// `h2` or `http/1.1`.
        public let protocolName: String
    }

    struct State {
        var connectionsAccepted = 0
        var inFlight = 0
        var maxInFlight = 0
        var requests: [Request] = []
    }

    public let port: Int
    public let isTLS: Bool
    private let channel: any Channel
    let state: NIOLockedValueBox<State>

    private init(port: Int, isTLS: Bool, channel: any Channel, state: NIOLockedValueBox<State>) {
        self.port = port
        self.isTLS = isTLS
        self.channel = channel
        self.state = state
    }

    /// Binds 127.0.0.1 port 0. With `tls`, TLS presenting its leaf (and
    /// intermediate) and offering `alpn`; without, prior-knowledge h2c.
    /// `maxConcurrentStreams` goes in the server's SETTINGS.
    public static func start(
        tls: TestCertificates? = nil,
        alpn: [String] = ["h2"],
        maxConcurrentStreams: Int = 100
    ) async throws -> HTTP2TestOrigin {
        let context = try tls.map { certificates in
            var configuration = try certificates.makeServerConfiguration()
            configuration.applicationProtocols = alpn
            return try NIOSSLContext(configuration: configuration)
        }
        let state = NIOLockedValueBox(State())
        let connection = connectionConfiguration(maxConcurrentStreams: maxConcurrentStreams)
        let streams = NIOHTTP2Handler.StreamConfiguration()
        let serve: NIOChannelInitializer = { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2TestOriginHandler(state: state))
            }
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                state.withLockedValue { $0.connectionsAccepted += 1 }
                guard let context else {
                    return channel.configureHTTP2Pipeline(mode: .server, connectionConfiguration: connection, streamConfiguration: streams) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                        }.flatMap { _ in serve(stream) }
                    }.map { _ in () }
                }
                do {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                // After ALPN: HTTP/2 streams, each through the HTTP/1 codec, or an HTTP/1.1 pipeline.
                return channel.configureCommonHTTPServerPipeline(
                    connectionConfiguration: connection, streamConfiguration: streams, configurator: serve
                )
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestUpstreamError.noLocalAddress
        }
        return HTTP2TestOrigin(port: port, isTLS: context != nil, channel: channel, state: state)
    }

    private static func connectionConfiguration(maxConcurrentStreams: Int) -> NIOHTTP2Handler.ConnectionConfiguration {
        var configuration = NIOHTTP2Handler.ConnectionConfiguration()
        configuration.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 64 * 1024),
        ]
        // `/wrong-length/...` sends a body its content-length does not describe.
        configuration.contentLengthValidation = .disabled
        return configuration
    }

    /// TCP connections accepted so far.
    public var connectionsAccepted: Int { state.withLockedValue { $0.connectionsAccepted } }

    /// The most requests that were in flight at once (accepted, not yet answered).
    public var maxConcurrentRequests: Int { state.withLockedValue { $0.maxInFlight } }

    /// Every request received, in order.
    public var requests: [Request] { state.withLockedValue { $0.requests } }

    public func shutdown() async throws {
        try await channel.close()
    }
}
