import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP server on 127.0.0.1 (a random port) that hands each accepted connection to an async
/// closure, to script misbehaving upstreams: send garbage, answer half a response, never answer.
///
/// The connection is closed when the closure returns (or throws). ``shutdown()`` closes every
/// connection and cancels the closures still running.
public final class RawTCPServer: Sendable {
    public typealias Handler = @Sendable (RawTCPConnection) async throws -> Void

    /// The TCP port the server listens on.
    public let port: Int
    /// Always `127.0.0.1`.
    public let host: String

    private let serverChannel: any Channel
    private let serverTask: Task<Void, Never>
    private let state: NIOLockedValueBox<State>

    private struct State {
        var connectionsAccepted = 0
        var open: [ObjectIdentifier: RawTCPConnection] = [:]
        var isShutDown = false
    }

    private init(port: Int, host: String, serverChannel: any Channel, serverTask: Task<Void, Never>, state: NIOLockedValueBox<State>) {
        self.port = port
        self.host = host
        self.serverChannel = serverChannel
        self.serverTask = serverTask
        self.state = state
    }

    /// Binds 127.0.0.1 port 0 and calls `handler` for every accepted connection, concurrently.
    public static func start(_ handler: @escaping Handler) async throws -> RawTCPServer {
        let state = NIOLockedValueBox(State())
        let host = "127.0.0.1"
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .bind(host: host, port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let connection = try RawTCPConnection.configure(channel)
                    Self.register(connection, in: state)
                    return connection
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
                                do {
                                    try await handler(connection)
                                } catch {
                                    // A script failing (or cancelled at shutdown) just ends its connection.
                                }
                                await connection.close()
                            }
                        }
                    }
                } catch {
                    // Listening socket closed: stop accepting.
                }
            }
        }
        return RawTCPServer(port: port, host: host, serverChannel: server.channel, serverTask: serverTask, state: state)
    }

    private static func register(_ connection: RawTCPConnection, in state: NIOLockedValueBox<State>) {
        let id = ObjectIdentifier(connection)
        let accepted = state.withLockedValue { state -> Bool in
            state.connectionsAccepted += 1
            guard !state.isShutDown else { return false }
            state.open[id] = connection
            return true
        }
        guard accepted else {
            connection.channel.close(promise: nil)
            return
        }
        connection.channel.closeFuture.whenComplete { _ in
            state.withLockedValue { _ = $0.open.removeValue(forKey: id) }
        }
    }

    /// TCP connections accepted so far.
    public var connectionsAccepted: Int {
        self.state.withLockedValue { $0.connectionsAccepted }
    }

    /// Stops listening, closes every connection, cancels running handlers and waits for them.
    public func shutdown() async throws {
        let open = self.state.withLockedValue { state -> [RawTCPConnection]? in
            guard !state.isShutDown else { return nil }
            state.isShutDown = true
            return Array(state.open.values)
        }
        guard let open else { return }
        try? await self.serverChannel.close()
        for connection in open {
            connection.channel.close(promise: nil)
        }
        self.serverTask.cancel()
        await self.serverTask.value
    }
}
