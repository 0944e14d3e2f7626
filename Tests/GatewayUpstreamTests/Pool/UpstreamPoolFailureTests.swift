import GatewayCore
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// Connect failures, timeouts and upstreams that break mid-exchange.
@Suite("UpstreamPool: failures")
struct UpstreamPoolFailureTests {
    @Test(.timeLimit(.minutes(1)))
    func refusedConnectFailsWithConnectFailed() async throws {
        let port = try await PoolTest.closedPort()
        try await PoolTest.withPool { pool in
            let context = PoolTest.context()
            let error = await PoolTest.expectGatewayError(.connectFailed) {
                _ = try await pool.handle(PoolTest.request(port: port, "/"), context: context)
            }
            #expect(error?.upstream == "127.0.0.1:\(port)")
            #expect(error?.cause != nil)
            #expect(context.record.attempts.first?.errorCode == .connectFailed)
            #expect(context.record.attempts.first?.end != nil)
            #expect(pool.openConnectionCount == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func stalledHandshakeFailsWithConnectTimeout() async throws {
        // The server accepts TCP and never answers the TLS ClientHello: the connect
        // timeout covers the handshake.
        let server = try await RawTCPServer.start { connection in
            try await Task.sleep(for: .seconds(30))
            _ = connection
        }
        let configuration = PoolTest.configuration(connectTimeout: .milliseconds(300))
        try await PoolTest.withPool(configuration) { pool in
            let started = ContinuousClock.now
            let error = await PoolTest.expectGatewayError(.connectTimeout) {
                _ = try await pool.handle(PoolTest.request(port: server.port, "/", scheme: .https), context: PoolTest.context())
            }
            #expect(error?.upstream == "127.0.0.1:\(server.port)")
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(pool.openConnectionCount == 0)
        }
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func plainServerBehindHTTPSFailsTheHandshake() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            await PoolTest.expectGatewayError(.tlsHandshakeFailed) {
                _ = try await pool.handle(PoolTest.request(port: upstream.port, "/echo", scheme: .https), context: PoolTest.context())
            }
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func slowUpstreamFailsWithRequestTimeout() async throws {
        let upstream = try await TestUpstream.start()
        let configuration = PoolTest.configuration(requestTimeout: .milliseconds(300))
        try await PoolTest.withPool(configuration) { pool in
            let context = PoolTest.context()
            let started = ContinuousClock.now
            await PoolTest.expectGatewayError(.requestTimeout) {
                _ = try await pool.handle(PoolTest.request(port: upstream.port, "/delay/20000"), context: context)
            }
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(context.record.attempts.first?.errorCode == .requestTimeout)
            #expect(context.record.attempts.first?.requestSent != nil)
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func stallBetweenBodyChunksFailsWithRequestTimeout() async throws {
        let upstream = try await TestUpstream.start()
        // The head must arrive within the timeout even when other suites load the machine.
        let configuration = PoolTest.configuration(requestTimeout: .seconds(3))
        try await PoolTest.withPool(configuration) { pool in
            let response = try await pool.handle(
                PoolTest.request(port: upstream.port, "/bytes/3000?chunk=1000&delay_ms=20000"),
                context: PoolTest.context()
            )
            #expect(response.status == .ok)
            await PoolTest.expectGatewayError(.requestTimeout) {
                _ = try await PoolTest.collect(response.body)
            }
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func resetMidBodyFailsTheBodyWithConnectionReset() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let context = PoolTest.context()
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/reset-after/100000"), context: context)
            #expect(response.status == .ok)
            #expect(response.body.declaredLength == 200_000)
            let error = await PoolTest.expectGatewayError(.connectionReset) {
                _ = try await PoolTest.drain(response.body)
            }
            #expect(error?.upstream == "127.0.0.1:\(upstream.port)")
            #expect(context.record.attempts.first?.errorCode == .connectionReset)
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func closeAfterHeadFailsTheBodyWithConnectionReset() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/close-after-head"), context: PoolTest.context())
            #expect(response.body.declaredLength == 100)
            await PoolTest.expectGatewayError(.connectionReset) {
                _ = try await PoolTest.collect(response.body)
            }
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func closeBeforeTheHeadFailsWithConnectionReset() async throws {
        let server = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            await connection.close()
        }
        try await PoolTest.withPool { pool in
            await PoolTest.expectGatewayError(.connectionReset) {
                _ = try await pool.handle(PoolTest.request(port: server.port, "/"), context: PoolTest.context())
            }
        }
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func malformedResponseFailsWithProtocolError() async throws {
        let server = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            try await connection.send("HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n")
            try await Task.sleep(for: .seconds(5))
        }
        try await PoolTest.withPool { pool in
            await PoolTest.expectGatewayError(.upstreamProtocolError) {
                _ = try await pool.handle(PoolTest.request(port: server.port, "/"), context: PoolTest.context())
            }
        }
        try await server.shutdown()
    }
}
