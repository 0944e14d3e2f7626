import GatewayCore
import GatewayTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import GatewayUpstream

/// The transport of exchanges (`UpstreamTransport.startAttempt`): response parts go to a
/// delegate on the caller's loop. On a warm pool an attempt starts at once on
/// the idle connection of its loop (no attempt object, nothing to cancel,
/// issue 14); the connection is parked idle again at the end without an
/// action list.
@Suite("UpstreamPool as the exchanges' transport")
struct UpstreamPoolTransportTests {
    /// One attempt's callbacks, on its loop: the status and body bytes, or the failure.
    final class Collector: UpstreamAttemptDelegate {
        let done: EventLoopPromise<(status: UInt, bytes: Int)>
        private var status: UInt = 0
        private var bytes = 0

        init(done: EventLoopPromise<(status: UInt, bytes: Int)>) { self.done = done }

        func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {}
        func upstreamResponseHead(_ head: UpstreamResponseHead) { status = head.status.code }
        func upstreamResponseBodyPart(_ buffer: ByteBuffer) { bytes += buffer.readableBytes }
        func upstreamReadComplete() {}
        func upstreamResponseEnd() { done.succeed((status, bytes)) }
        func upstreamAttemptFailed(_ error: any Error) { done.fail(error) }
        var upstreamShouldPauseReading: Bool { false }
    }

    /// Starts one attempt on `loop` and waits for its end; cancels it afterwards (harmless then).
    static func send(_ request: ProxyRequest, pool: UpstreamPool, record: ExchangeRecord, on loop: any EventLoop) async throws -> (status: UInt, bytes: Int) {
        try await loop.flatSubmit {
            let done = loop.makePromise(of: (status: UInt, bytes: Int).self)
            let cancellation = pool.startAttempt(request, record: record, on: loop, delegate: Collector(done: done))
            return done.futureResult.map { result in
                cancellation.cancel()
                return result
            }
        }.get()
    }

    @Test(.timeLimit(.minutes(1)))
    func sequentialAttemptsFromOneLoopReuseItsIdleConnection() async throws {
        let upstream = try await TestUpstream.start()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await PoolTest.withPool { pool in
            let record = ExchangeRecord()
            for _ in 0..<10 {
                let result = try await Self.send(PoolTest.request(port: upstream.port, "/bytes/1024"), pool: pool, record: record, on: loop)
                #expect(result.status == 200 && result.bytes == 1024)
                #expect(pool.waitingRequestCount == 0)
            }
            #expect(upstream.connectionsAccepted == 1)
            #expect(pool.openConnectionCount == 1 && pool.idleConnectionCount == 1)
            let attempts = record.attempts
            #expect(attempts.count == 10)
            #expect(!attempts[0].reusedConnection)
            #expect(attempts.dropFirst().allSatisfy { $0.reusedConnection && $0.status == 200 && $0.errorCode == nil })
        }
        try await upstream.shutdown()
    }

    /// A connection whose exchange failed is closed, not parked (the release's
    /// slow path): the next attempt opens a new one.
    @Test(.timeLimit(.minutes(1)))
    func aConnectionWhoseExchangeFailedIsNotReused() async throws {
        let upstream = try await TestUpstream.start()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try await PoolTest.withPool { pool in
            let record = ExchangeRecord()
            let first = try await Self.send(PoolTest.request(port: upstream.port, "/bytes/16"), pool: pool, record: record, on: loop)
            #expect(first.status == 200)
            await #expect(throws: (any Error).self) {
                try await Self.send(PoolTest.request(port: upstream.port, "/reset-after/4"), pool: pool, record: record, on: loop)
            }
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
            let again = try await Self.send(PoolTest.request(port: upstream.port, "/bytes/16"), pool: pool, record: record, on: loop)
            #expect(again.status == 200 && again.bytes == 16)
            #expect(upstream.connectionsAccepted == 2)
            #expect(record.attempts.map(\.reusedConnection) == [false, true, false])
        }
        try await upstream.shutdown()
    }
}
