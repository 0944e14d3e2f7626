import GatewayCore
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// Bodies both ways: streaming, back-pressure, bodyless responses, cancellation.
@Suite("UpstreamPool: streaming")
struct UpstreamPoolStreamingTests {
    static let large = 64 * 1024 * 1024

    @Test(.timeLimit(.minutes(1)))
    func largeDownloadStreamsWithBackPressure() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/bytes/\(Self.large)"), context: PoolTest.context())
            #expect(response.body.declaredLength == Self.large)
            guard case .stream(let source) = response.body.storage, let body = source as? UpstreamResponseBody else {
                Issue.record("expected a streamed body")
                return
            }
            var count = 0
            var checksum: UInt32 = 0
            let first = try #require(try await body.next())
            count += first.readableBytes
            checksum = TestUpstream.checksum(first, continuing: checksum)
            // A consumer that stops reading stops the socket reads: the buffer stays small.
            try await Task.sleep(for: .milliseconds(300))
            #expect(body.bufferedBytes <= 1024 * 1024, "buffered \(body.bufferedBytes) bytes")
            while let chunk = try await body.next() {
                count += chunk.readableBytes
                checksum = TestUpstream.checksum(chunk, continuing: checksum)
                #expect(body.bufferedBytes <= 1024 * 1024)
            }
            #expect(count == Self.large)
            #expect(checksum == PoolTest.patternChecksum(count: Self.large))
            #expect(await PoolTest.eventually { pool.idleConnectionCount == 1 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func largeUploadStreams(withContentLength: Bool) async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let total = withContentLength ? Self.large : 8 * 1024 * 1024 + 17
            let source = PatternBodySource(total: total)
            let body = ProxyBody.stream(source, declaredLength: withContentLength ? total : nil)
            let context = PoolTest.context()
            let response = try await pool.handle(PoolTest.request(.POST, port: upstream.port, "/upload", body: body), context: context)
            #expect(response.status == .ok)
            let result = try UploadResponseBody.decode(try await PoolTest.collect(response.body))
            #expect(result.bytes == total)
            #expect(result.checksum == source.expectedChecksum)
            let recorded = try #require(upstream.receivedRequests.last)
            if withContentLength {
                #expect(recorded.header("Content-Length") == String(total))
            } else {
                #expect(recorded.header("Transfer-Encoding") == "chunked")
            }
            #expect(context.record.attempts.first?.requestSent != nil)
            #expect(await PoolTest.eventually { pool.idleConnectionCount == 1 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func uploadToAnUpstreamThatDoesNotReadIsHeldBack() async throws {
        let server = try await NonReadingServer.start()
        try await PoolTest.withPool { pool in
            let source = PatternBodySource(total: 1024 * 1024 * 1024)
            let body = ProxyBody.stream(source, declaredLength: nil)
            let exchange = Task {
                try await pool.handle(PoolTest.request(.POST, port: server.port, "/upload", body: body), context: PoolTest.context())
            }
            #expect(await PoolTest.eventually { source.pulled > 0 })
            try await Task.sleep(for: .milliseconds(500))
            // Only what fits in the socket buffers has been pulled from the client.
            #expect(source.pulled < 32 * 1024 * 1024, "pulled \(source.pulled) bytes")
            exchange.cancel()
            await #expect(throws: CancellationError.self) { _ = try await exchange.value }
            #expect(await PoolTest.eventually { source.wasCancelled })
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func earlyResponseEndsTheUploadAndClosesTheConnection() async throws {
        let server = try await RawTCPServer.start { connection in
            _ = try await connection.receiveUntil("\r\n\r\n")
            try await connection.send("HTTP/1.1 413 Payload Too Large\r\nContent-Length: 4\r\n\r\nbig!")
            try await Task.sleep(for: .seconds(30))
        }
        try await PoolTest.withPool { pool in
            let source = PatternBodySource(total: 1024 * 1024 * 1024)
            let response = try await pool.handle(
                PoolTest.request(.POST, port: server.port, "/upload", body: .stream(source, declaredLength: nil)),
                context: PoolTest.context()
            )
            #expect(response.status == .payloadTooLarge)
            #expect(try await PoolTest.collect(response.body) == Array("big!".utf8))
            #expect(await PoolTest.eventually { source.wasCancelled })
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        try await server.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func bodylessResponsesKeepTheConnection() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let head = try await pool.handle(PoolTest.request(.HEAD, port: upstream.port, "/bytes/1000"), context: PoolTest.context())
            #expect(head.status == .ok)
            #expect(head.headers["content-length"] == ["1000"])
            #expect(head.body.declaredLength == 1000)
            guard case .empty = head.body.storage else {
                Issue.record("a HEAD response has no body")
                return
            }
            for code in [204, 304] {
                let response = try await pool.handle(PoolTest.request(port: upstream.port, "/status/\(code)"), context: PoolTest.context())
                #expect(response.status.code == code)
                #expect(try await PoolTest.collect(response.body).isEmpty)
            }
            let get = try await pool.handle(PoolTest.request(port: upstream.port, "/bytes/1000"), context: PoolTest.context())
            #expect(try await PoolTest.collect(get.body) == TestUpstream.pattern(count: 1000))
            #expect(upstream.connectionsAccepted == 1)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func chunkedResponseLosesItsFramingHeaders() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(
                PoolTest.request(port: upstream.port, "/bytes/100000?chunked=1&chunk=1000"),
                context: PoolTest.context()
            )
            #expect(response.body.declaredLength == nil)
            #expect(!response.headers.contains(name: "transfer-encoding"))
            #expect(!response.headers.contains(name: "content-length"))
            #expect(try await PoolTest.collect(response.body) == TestUpstream.pattern(count: 100_000))
            #expect(await PoolTest.eventually { pool.idleConnectionCount == 1 })
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingWhileWaitingForTheHeadClosesTheConnection() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let context = PoolTest.context()
            let exchange = Task {
                try await pool.handle(PoolTest.request(port: upstream.port, "/delay/10000"), context: context)
            }
            #expect(await PoolTest.eventually { upstream.requestsServed == 1 })
            exchange.cancel()
            await #expect(throws: CancellationError.self) { _ = try await exchange.value }
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
            #expect(context.record.attempts.first?.end != nil)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheBodyMidwayClosesTheConnection() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(PoolTest.request(port: upstream.port, "/bytes/\(Self.large)"), context: PoolTest.context())
            guard case .stream(let body) = response.body.storage else {
                Issue.record("expected a streamed body")
                return
            }
            _ = try await body.next()
            body.cancel()
            await #expect(throws: CancellationError.self) { _ = try await body.next() }
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })

            // Dropping an unread body has the same effect.
            do {
                let dropped = try await pool.handle(PoolTest.request(port: upstream.port, "/bytes/\(Self.large)"), context: PoolTest.context())
                #expect(dropped.status == .ok)
            }
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
            #expect(upstream.connectionsAccepted == 2)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheReadingTaskClosesTheConnection() async throws {
        let upstream = try await TestUpstream.start()
        try await PoolTest.withPool { pool in
            let response = try await pool.handle(
                PoolTest.request(port: upstream.port, "/bytes/100000?chunk=1000&delay_ms=50"),
                context: PoolTest.context()
            )
            let reader = Task { try await PoolTest.drain(response.body) }
            try await Task.sleep(for: .milliseconds(200))
            reader.cancel()
            await #expect(throws: CancellationError.self) { _ = try await reader.value }
            #expect(await PoolTest.eventually { pool.openConnectionCount == 0 })
        }
        try await upstream.shutdown()
    }
}
