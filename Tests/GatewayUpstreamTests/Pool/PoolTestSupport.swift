import GatewayCore
import GatewayTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Testing

@testable import GatewayUpstream

/// Helpers for the live pool tests.
enum PoolTest {
    static let logger = Logger(label: "pool-tests")

    static func configuration(
        maxConnectionsPerKey: Int = 8,
        idleTimeout: Duration = .seconds(30),
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(20),
        maxWaitForConnection: Duration? = nil
    ) -> UpstreamPoolConfiguration {
        UpstreamPoolConfiguration(
            maxConnectionsPerKey: maxConnectionsPerKey,
            idleTimeout: idleTimeout,
            connectTimeout: connectTimeout,
            requestTimeout: requestTimeout,
            maxWaitForConnection: maxWaitForConnection
        )
    }

    /// Runs `body` with a pool, shutting it down afterwards.
    @discardableResult
    static func withPool<T>(
        _ configuration: UpstreamPoolConfiguration = PoolTest.configuration(),
        tls: any UpstreamTLSHandlerFactory = InsecureTLSFactory(),
        events: any GatewayEvents = NoGatewayEvents(),
        _ body: (UpstreamPool) async throws -> T
    ) async throws -> T {
        let pool = UpstreamPool(
            configuration: configuration,
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            tls: tls,
            events: events,
            logger: logger
        )
        do {
            let result = try await body(pool)
            await pool.shutdown()
            return result
        } catch {
            await pool.shutdown()
            throw error
        }
    }

    static func request(
        _ method: HTTPMethod = .GET,
        port: Int,
        _ target: String,
        scheme: UpstreamScheme = .http,
        host: String = "127.0.0.1",
        headers: HTTPHeaders = [:],
        body: ProxyBody = .empty,
        tls: UpstreamTLSSettings = .standard
    ) -> ProxyRequest {
        ProxyRequest(method: method, scheme: scheme, host: host, port: port, target: target, headers: RequestFields(headers), body: body, tls: tls)
    }

    static func context() -> RequestContext {
        RequestContext(id: "t", clientAddress: "127.0.0.1:1", logger: logger)
    }

    /// Reads a whole body (bounded).
    static func collect(_ body: ProxyBody, limit: Int = 16 * 1024 * 1024) async throws -> [UInt8] {
        let buffer = try await body.collect(upTo: limit)
        return Array(buffer.readableBytesView)
    }

    /// Reads a whole body, counting bytes and checksumming, without keeping it.
    static func drain(_ body: ProxyBody) async throws -> (count: Int, checksum: UInt32) {
        var count = 0
        var checksum: UInt32 = 0
        try await body.forEachChunk { chunk in
            count += chunk.readableBytes
            checksum = TestUpstream.checksum(chunk, continuing: checksum)
        }
        return (count, checksum)
    }

    /// The byte sum (mod 2^32) of the first `count` pattern bytes, without making them.
    static func patternChecksum(count: Int) -> UInt32 {
        let period = UInt64(TestUpstream.patternPeriod)
        let full = UInt64(count) / period
        let rest = UInt64(count) % period
        let sum = full * (period * (period - 1) / 2) + (rest == 0 ? 0 : rest * (rest - 1) / 2)
        return UInt32(truncatingIfNeeded: sum)
    }

    /// Polls `condition` until it holds or `timeout` passes.
    static func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// Asserts `body` throws a `GatewayError` with `code`, and returns it.
    @discardableResult
    static func expectGatewayError(
        _ code: GatewayError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async -> GatewayError? {
        do {
            try await body()
            Issue.record("expected \(code), got success", sourceLocation: sourceLocation)
        } catch let error as GatewayError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
            return error
        } catch {
            Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, then closed).
    static func closedPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress!.port!
        try await channel.close()
        return port
    }
}

/// A request body made on the fly: `total` pattern bytes in `chunk`-sized pieces,
/// counting how many bytes the pool has pulled.
final class PatternBodySource: BodySource {
    private struct State {
        var offset = 0
        var cancelled = false
    }

    let total: Int
    let chunk: Int
    private let state = NIOLockedValueBox(State())
    private let pattern: ByteBuffer

    init(total: Int, chunk: Int = 64 * 1024) {
        self.total = total
        self.chunk = chunk
        var buffer = ByteBuffer()
        buffer.writeBytes(TestUpstream.pattern(count: chunk + TestUpstream.patternPeriod))
        self.pattern = buffer
    }

    var pulled: Int { state.withLockedValue { $0.offset } }
    var wasCancelled: Bool { state.withLockedValue { $0.cancelled } }

    func next() async throws -> ByteBuffer? {
        let slice: ByteBuffer? = state.withLockedValue { s in
            guard s.offset < total else { return nil }
            let length = min(chunk, total - s.offset)
            let slice = pattern.getSlice(at: s.offset % TestUpstream.patternPeriod, length: length)
            s.offset += length
            return slice
        }
        return slice
    }

    func cancel() {
        state.withLockedValue { $0.cancelled = true }
    }

    /// The checksum `/upload` reports for this body.
    var expectedChecksum: UInt32 { PoolTest.patternChecksum(count: total) }
}

/// A TLS factory that verifies nothing: enough to make https connections in pool
/// tests (TLS verification is tested with PinningTLSHandlerFactory elsewhere).
struct InsecureTLSFactory: UpstreamTLSHandlerFactory {
    func makeClientHandler(
        serverHostname: String,
        settings: UpstreamTLSSettings,
        upstreamName: String?
    ) throws -> (handler: NIOSSLClientHandler, report: TLSVerificationReport) {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        let context = try NIOSSLContext(configuration: configuration)
        let isIP = serverHostname.contains(":") || serverHostname.allSatisfy { $0.isNumber || $0 == "." }
        let handler = try NIOSSLClientHandler(context: context, serverHostname: isIP ? nil : serverHostname)
        return (handler, TLSVerificationReport())
    }
}

/// Counts connection events.
final class PoolTestEvents: GatewayEvents {
    private let counts = NIOLockedValueBox((opened: 0, closed: 0))

    var opened: Int { counts.withLockedValue { $0.opened } }
    var closed: Int { counts.withLockedValue { $0.closed } }

    func upstreamConnectionOpened(host: String, port: Int) {
        counts.withLockedValue { $0.opened += 1 }
    }

    func upstreamConnectionClosed(host: String, port: Int) {
        counts.withLockedValue { $0.closed += 1 }
    }
}

/// Accepts TCP connections and never reads from them: writes to it back up
/// once the socket buffers are full.
final class NonReadingServer: Sendable {
    private let serverChannel: any Channel
    private let children: NIOLockedValueBox<[any Channel]>
    let port: Int

    private init(serverChannel: any Channel, children: NIOLockedValueBox<[any Channel]>) {
        self.serverChannel = serverChannel
        self.children = children
        self.port = serverChannel.localAddress?.port ?? 0
    }

    static func start() async throws -> NonReadingServer {
        let children = NIOLockedValueBox<[any Channel]>([])
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(ChannelOptions.autoRead, value: false)
            .childChannelInitializer { channel in
                children.withLockedValue { $0.append(channel) }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return NonReadingServer(serverChannel: channel, children: children)
    }

    func shutdown() async {
        try? await serverChannel.close()
        for child in children.withLockedValue({ $0 }) {
            try? await child.close()
        }
    }
}
