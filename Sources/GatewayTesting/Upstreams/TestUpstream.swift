import NIOCore
public import NIOSSL
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 origin server on 127.0.0.1 (a random port) for integration tests.
///
/// Routes (query parameters are parsed from the request target, which may be origin- or
/// absolute-form):
/// - `/echo...`: 200 JSON ``EchoResponseBody`` (method, target, headers in received order, body).
/// - `/status/{code}?header=Name:Value`: that status; body `status {code}\n` unless forbidden.
///   A 1xx code is sent as an informational response followed by a final 200.
/// - `/bytes/{n}?chunk=65536&delay_ms=0&chunked=0|1`: `n` pattern bytes (see ``pattern(count:)``),
///   streamed with back-pressure (1 GiB is fine).
/// - `/delay/{ms}`: waits, then `ok`.
/// - `/reset-after/{n}`: `Content-Length: 2n`, `n` bytes, then a TCP RST.
/// - `/close-after-head`: `Content-Length: 100`, then a clean close without body.
/// - `/upload`: streams the request body, answers JSON ``UploadResponseBody``.
/// - `/custom...`: the responder set with ``setResponder(_:)``, 404 without one.
/// - anything else: 404.
///
/// HTTP/1.1 keep-alive, `Connection: close`, chunked and content-length request bodies and
/// `Expect: 100-continue` are supported. Every request is recorded in ``receivedRequests``.
public final class TestUpstream: Sendable {
    /// The TCP port the upstream listens on.
    public let port: Int
    /// Always `127.0.0.1`.
    public let host: String
    /// True if the upstream speaks HTTPS.
    public let isTLS: Bool

    let state: TestUpstreamState
    private let serverChannel: any Channel
    private let serverTask: Task<Void, Never>

    private init(port: Int, host: String, isTLS: Bool, state: TestUpstreamState, serverChannel: any Channel, serverTask: Task<Void, Never>) {
        self.port = port
        self.host = host
        self.isTLS = isTLS
        self.state = state
        self.serverChannel = serverChannel
        self.serverTask = serverTask
    }

    /// Binds 127.0.0.1 port 0. If `tls` is given, speaks HTTPS with it.
    public static func start(tls: NIOSSLContext? = nil) async throws -> TestUpstream {
        let state = TestUpstreamState()
        let host = "127.0.0.1"
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    state.register(channel)
                    return try UpstreamSession.configurePipeline(channel, tls: tls)
                }
            }
        guard let port = server.channel.localAddress?.port else {
            try? await server.channel.close()
            throw TestUpstreamError.noLocalAddress
        }

        let serverTask = Task {
            await withDiscardingTaskGroup { group in
                do {
                    try await server.executeThenClose { connections in
                        for try await connection in connections {
                            group.addTask {
                                await UpstreamSession.serve(connection, state: state)
                            }
                        }
                    }
                } catch {
                    // The listening socket failed or was closed: stop accepting.
                }
            }
        }
        return TestUpstream(
            port: port,
            host: host,
            isTLS: tls != nil,
            state: state,
            serverChannel: server.channel,
            serverTask: serverTask
        )
    }

    /// `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`.
    public var baseURL: String {
        "\(self.isTLS ? "https" : "http")://\(self.host):\(self.port)"
    }

    /// `baseURL + path`, e.g. `upstream.url("/echo")`.
    public func url(_ path: String) -> String {
        self.baseURL + path
    }

    /// TCP connections accepted so far.
    public var connectionsAccepted: Int {
        self.state.connectionsAccepted
    }

    /// Requests whose head was received so far (counted before the response is sent).
    public var requestsServed: Int {
        self.state.requestsServed
    }

    /// Every request received so far, in arrival order.
    public var receivedRequests: [RecordedRequest] {
        self.state.receivedRequests
    }

    /// Sets (or clears) the responder for requests whose path starts with `/custom`.
    public func setResponder(_ responder: (@Sendable (RecordedRequest) async -> TestResponse)?) {
        self.state.setResponder(responder)
    }

    /// Stops listening, closes every open connection and waits for the connection tasks to end.
    /// Calling it twice is harmless.
    public func shutdown() async throws {
        guard let openChannels = self.state.beginShutdown() else { return }
        try? await self.serverChannel.close()
        for channel in openChannels {
            channel.close(promise: nil)
        }
        self.serverTask.cancel()
        await self.serverTask.value
    }
}

/// Errors of the test servers.
public enum TestUpstreamError: Error, Sendable, Equatable {
    case noLocalAddress
    case unexpectedRequestPart
    case connectionClosedMidRequest
}
