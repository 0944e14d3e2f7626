import GatewayCore
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// Keep-alive, limits per key, idle handling and shutdown against a live upstream.
@Suite("UpstreamPool: reuse and limits")
struct UpstreamPoolReuseTests {
    @Test(.timeLimit(.minutes(1)))
    func sequentialRequestsReuseOneConnection() async throws {
        let upstream = try await TestUpstream.start()
        let events = PoolTestEvents()
        try await PoolTest.withPool(events: events) { pool in
            let context = PoolTest.context()
            for _ in 0..<10 {
                let response = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: context)
                #expect(response.status == .ok)
                let echo = try EchoResponseBody.decode(try await PoolTest.collect(response.body))
                #expect(echo.method == "GET")
                #expect(echo.headers.contains(["Host", "127.0.0.1:\(upstream.port)"]))
            }
            #expect(upstream.connectionsAccepted == 1)
            #expect(pool.openConnectionCount == 1)
            #expect(await PoolTest.eventually { pool.idleConnectionCount == 1 })

            let attempts = context.record.attempts
            #expect(attempts.count == 10)
            let first = attempts[0]
            #expect(!first.reusedConnection)
            #expect(first.connect != nil)
            #expect(first.tls == nil)
            #expect(first.status == 200)
            #expect(first.requestSent != nil && first.responseHead != nil && first.end != nil)
            for attempt in attempts.dropFirst() {
                #expect(attempt.reusedConnection)
                #expect(attempt.connectStart == nil && attempt.connectEnd == nil)
                #expect(attempt.timeToFirstByte != nil && attempt.total != nil)
                #expect(attempt.errorCode == nil)
            }
        }
        #expect(events.opened == 1)
        #expect(await PoolTest.eventually { events.closed == 1 })
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func concurrencyIsBoundedPerKey() async throws {
        let upstream = try await TestUpstream.start()
        let configuration = PoolTest.configuration(maxConnectionsPerKey: 2, maxWaitForConnection: .seconds(20))
        try await PoolTest.withPool(configuration) { pool in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let response = try await pool.handle(PoolTest.request(port: upstream.port, "/delay/100"), context: PoolTest.context())
                        _ = try await PoolTest.collect(response.body)
                        #expect(pool.openConnectionCount <= 2)
                        return Int(response.status.code)
                    }
                }
                for try await status in group {
                    #expect(status == 200)
                }
            }
            #expect(upstream.connectionsAccepted == 2)
            #expect(upstream.requestsServed == 8)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func waitingBeyondTheMaximumFailsWithPoolExhausted() async throws {
        let upstream = try await TestUpstream.start()
        let configuration = PoolTest.configuration(maxConnectionsPerKey: 1, maxWaitForConnection: .milliseconds(200))
        try await PoolTest.withPool(configuration) { pool in
            let busy = Task {
                let response = try await pool.handle(PoolTest.request(port: upstream.port, "/delay/20000"), context: PoolTest.context())
                return try await PoolTest.collect(response.body)
            }
            #expect(await PoolTest.eventually { upstream.requestsServed == 1 })
            let started = ContinuousClock.now
            let error = await PoolTest.expectGatewayError(.poolExhausted) {
                _ = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
            }
            #expect(error?.upstream == "127.0.0.1:\(upstream.port)")
            #expect(ContinuousClock.now - started < .seconds(10))
            busy.cancel()
            _ = try? await busy.value
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func idleConnectionsCloseAfterTheIdleTimeout() async throws {
        let upstream = try await TestUpstream.start()
        let configuration = PoolTest.configuration(idleTimeout: .seconds(1))
        try await PoolTest.withPool(configuration) { pool in
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
            _ = try await PoolTest.collect(response.body)
            #expect(pool.idleConnectionCount == 1)
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })

            let again = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
            _ = try await PoolTest.collect(again.body)
            #expect(upstream.connectionsAccepted == 2)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func idleConnectionClosedByThePeerIsDropped() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
            _ = try await PoolTest.collect(response.body)
            #expect(pool.idleConnectionCount == 1)
            try await upstream.shutdown()
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func connectionCloseFromTheUpstreamIsNotReused() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            for _ in 0..<3 {
                let response = try await pool.handle(
                    PoolTest.request(port: upstream.port, "/status/200?header=Connection:close"),
                    context: PoolTest.context()
                )
                #expect(response.status == .ok)
                #expect(!response.headers.contains(name: "connection"))
                _ = try await PoolTest.collect(response.body)
            }
            #expect(upstream.connectionsAccepted == 3)
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func shutdownClosesConnectionsAndRefusesNewRequests() async throws {
        let upstream = try await TestUpstream.start()
        let pool = UpstreamPool(
            configuration: PoolTest.configuration(),
            eventLoopGroup: .singletonMultiThreadedEventLoopGroup,
            tls: InsecureTLSFactory(),
            logger: PoolTest.logger
        )
        let response = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
        _ = try await PoolTest.collect(response.body)
        #expect(pool.openConnectionCount == 1)
        await pool.shutdown()
        #expect(pool.openConnectionCount == 0)
        await PoolTest.expectGatewayError(.shuttingDown) {
            _ = try await pool.handle(PoolTest.request(port: upstream.port, "/echo"), context: PoolTest.context())
        }
        await pool.shutdown()  // twice is harmless
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func hostHeaderIsAddedOnlyWhenAbsentAndFramingIsSet() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            var buffer = ByteBuffer()
            buffer.writeString("hello")
            let headers: HTTPHeaders = ["Host": "example.test", "X-Custom": "1", "Transfer-Encoding": "gzip", "Content-Length": "99"]
            let response = try await pool.handle(
                PoolTest.request(.POST, port: upstream.port, "/echo?x=1", headers: headers, body: .bytes(buffer)),
                context: PoolTest.context()
            )
            let echo = try EchoResponseBody.decode(try await PoolTest.collect(response.body))
            #expect(echo.target == "/echo?x=1")
            #expect(echo.headers.filter { $0[0].lowercased() == "host" } == [["Host", "example.test"]])
            #expect(echo.headers.contains(["X-Custom", "1"]))
            #expect(echo.headers.contains(["Content-Length", "5"]))
            #expect(!echo.headers.contains { $0[0].lowercased() == "transfer-encoding" })
            #expect(echo.body == Array("hello".utf8))

            let empty = try await pool.handle(PoolTest.request(.POST, port: upstream.port, "/echo"), context: PoolTest.context())
            let emptyEcho = try EchoResponseBody.decode(try await PoolTest.collect(empty.body))
            #expect(emptyEcho.headers.contains(["Content-Length", "0"]))
        }
        try await upstream.shutdown()
    }
}
