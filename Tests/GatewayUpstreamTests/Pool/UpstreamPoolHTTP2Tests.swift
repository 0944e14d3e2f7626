import Foundation
import GatewayCore
import GatewayTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import GatewayUpstream

/// The pool against real HTTP/2 origins (``HTTP2TestOrigin``, TLS with ALPN or
/// prior-knowledge h2c), through `startAttempt` as the exchanges use it:
/// concurrent requests share streams of few connections, trailers come
/// through, `http_version` picks the protocol, and `auto` still speaks
/// HTTP/1.1 to a server that offers nothing else.
@Suite("UpstreamPool: HTTP/2")
struct UpstreamPoolHTTP2Tests {
    /// Everything one attempt's delegate heard, in order.
    struct Outcome: Sendable {
        var status: UInt = 0
        var headers = HTTPHeaders()
        var body = ByteBuffer()
        var trailers: HTTPHeaders?
        var events: [String] = []
    }

    final class Collector: UpstreamAttemptDelegate {
        let done: EventLoopPromise<Outcome>
        private var outcome = Outcome()

        init(done: EventLoopPromise<Outcome>) { self.done = done }

        func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {}
        func upstreamResponseHead(_ head: UpstreamResponseHead) {
            outcome.status = head.status.code
            outcome.headers = head.headers
            outcome.events.append("head")
        }
        func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
            var buffer = buffer
            outcome.body.writeBuffer(&buffer)
            if outcome.events.last != "body" { outcome.events.append("body") }
        }
        func upstreamReadComplete() {}
        func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
            outcome.trailers = trailers
            outcome.events.append("trailers")
        }
        func upstreamResponseEnd() {
            outcome.events.append("end")
            done.succeed(outcome)
        }
        func upstreamAttemptFailed(_ error: any Error) { done.fail(error) }
        var upstreamShouldPauseReading: Bool { false }
    }

    /// Starts one attempt on `loop` (by default any loop of the group) and waits for its end.
    static func send(
        _ request: ProxyRequest, pool: UpstreamPool, record: ExchangeRecord = ExchangeRecord(),
        on loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next()
    ) async throws -> Outcome {
        try await loop.flatSubmit {
            let done = loop.makePromise(of: Outcome.self)
            _ = pool.startAttempt(request, record: record, on: loop, delegate: Collector(done: done))
            return done.futureResult
        }.get()
    }

    static func request(
        port: Int, _ target: String, scheme: UpstreamScheme = .https, version: UpstreamHTTPVersion = .auto,
        headers: [(String, String)] = [], tls: UpstreamTLSSettings = .standard
    ) -> ProxyRequest {
        var request = PoolTest.request(port: port, target, scheme: scheme, headers: HTTPHeaders(headers), tls: tls)
        request.upstreamHTTPVersion = version
        return request
    }

    /// A TLS origin offering `alpn`, and a pool that verifies it against the test CA.
    static func withTLSOrigin(
        alpn: [String] = ["h2"],
        maxConcurrentStreams: Int = 100,
        _ body: (UpstreamPool, HTTP2TestOrigin, UpstreamTLSSettings) async throws -> Void
    ) async throws {
        let certificates = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let origin = try await HTTP2TestOrigin.start(tls: certificates, alpn: alpn, maxConcurrentStreams: maxConcurrentStreams)
        do {
            try await PoolTest.withPool(tls: PinningTLSHandlerFactory(logger: PoolTest.logger)) { pool in
                try await body(pool, origin, UpstreamTLSSettings(caFile: paths.caBundle))
            }
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func sixtyConcurrentRequestsShareAtMostTwoConnections() async throws {
        try await Self.withTLSOrigin { pool, origin, tls in
            let results = try await withThrowingTaskGroup(of: (Int, Outcome, AttemptTimings?).self) { group in
                for index in 0..<60 {
                    group.addTask {
                        let record = ExchangeRecord()
                        let request = Self.request(port: origin.port, "/delay/100", headers: [("x-echo", "request-\(index)")], tls: tls)
                        let outcome = try await Self.send(request, pool: pool, record: record)
                        return (index, outcome, record.attempts.first)
                    }
                }
                var all: [(Int, Outcome, AttemptTimings?)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(results.count == 60)
            for (index, outcome, attempt) in results {
                #expect(outcome.status == 200)
                #expect(outcome.headers.first(name: "x-echo") == "request-\(index)")
                #expect(outcome.headers.first(name: "x-protocol") == "h2")
                #expect(outcome.headers.first(name: "x-authority") == "127.0.0.1:\(origin.port)")
                #expect(attempt?.httpVersion == UpstreamHTTPVersion.http2Name)
                #expect(attempt?.status == 200 && attempt?.timeToFirstByte != nil)
            }
            #expect(origin.connectionsAccepted <= 2)
            #expect(origin.maxConcurrentRequests > 1, "streams ran side by side")
            let fresh = results.filter { $0.2?.reusedConnection == false }
            #expect(fresh.count == origin.connectionsAccepted, "connect and TLS phases once per connection")
            #expect(fresh.allSatisfy { $0.2?.tls != nil && $0.2?.connect != nil })
            #expect(pool.http2ConnectionCount == origin.connectionsAccepted)
            #expect(pool.waitingRequestCount == 0)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aSecondConnectionOpensOnlyWhenTheFirstIsFull() async throws {
        try await Self.withTLSOrigin(maxConcurrentStreams: 5) { pool, origin, tls in
            try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await Self.send(Self.request(port: origin.port, "/delay/300", tls: tls), pool: pool).status }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(origin.connectionsAccepted == 2)
            #expect(origin.maxConcurrentRequests <= 8)
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func trailersArriveBeforeTheEnd() async throws {
        try await Self.withTLSOrigin { pool, origin, tls in
            let request = Self.request(port: origin.port, "/trailers", headers: [("TE", "trailers"), ("x-echo", "grpc")], tls: tls)
            let outcome = try await Self.send(request, pool: pool)
            #expect(outcome.status == 200)
            #expect(String(buffer: outcome.body) == "GET /trailers\n")
            #expect(outcome.trailers?.first(name: "grpc-status") == "0")
            #expect(outcome.trailers?.first(name: "x-trailer") == "done")
            #expect(outcome.events == ["head", "body", "trailers", "end"])
            #expect(origin.requests.last?.headers.first(name: "te") == "trailers", "te: trailers goes to an HTTP/2 upstream")
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func httpVersionPicksTheProtocolOfAServerThatSpeaksBoth() async throws {
        try await Self.withTLSOrigin(alpn: ["h2", "http/1.1"]) { pool, origin, tls in
            let record = ExchangeRecord()
            let http1 = try await Self.send(Self.request(port: origin.port, "/one", version: .http1, tls: tls), pool: pool, record: record)
            #expect(http1.headers.first(name: "x-protocol") == "http/1.1")
            #expect(record.attempts.first?.httpVersion == UpstreamHTTPVersion.http1Name)
            #expect(pool.http2ConnectionCount == 0)

            let auto = try await Self.send(Self.request(port: origin.port, "/two", tls: tls), pool: pool)
            #expect(auto.headers.first(name: "x-protocol") == "h2")
            let http2 = try await Self.send(Self.request(port: origin.port, "/three", version: .http2, tls: tls), pool: pool)
            #expect(http2.headers.first(name: "x-protocol") == "h2")
            #expect(origin.connectionsAccepted == 3, "one connection per http_version")
        }
    }

    /// `auto` against a server whose ALPN offers only `http/1.1`: its first
    /// connection is adopted by the HTTP/1 side, with its connect and TLS
    /// phases going to the request that waited for it, and reused after.
    @Test(.timeLimit(.minutes(1)))
    func autoSpeaksHTTP11ToAServerThatOffersNothingElse() async throws {
        let certificates = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        try await PoolTest.withPool(tls: PinningTLSHandlerFactory(logger: PoolTest.logger)) { pool in
            let tls = UpstreamTLSSettings(caFile: paths.caBundle)
            let record = ExchangeRecord()
            let loop = MultiThreadedEventLoopGroup.singleton.next()
            for _ in 0..<3 {
                let outcome = try await Self.send(Self.request(port: upstream.port, "/bytes/1000", tls: tls), pool: pool, record: record, on: loop)
                #expect(outcome.status == 200 && outcome.body.readableBytes == 1000)
            }
            #expect(upstream.connectionsAccepted == 1)
            let attempts = record.attempts
            #expect(attempts[0].tls != nil && !attempts[0].reusedConnection)
            #expect(attempts[1].reusedConnection && attempts[2].reusedConnection)
            #expect(attempts.allSatisfy { $0.httpVersion == UpstreamHTTPVersion.http1Name })
            #expect(pool.http2ConnectionCount == 0)
        }
        try await upstream.shutdown()
    }

    /// Requests that waited for an `auto` key's first connection, which
    /// negotiated HTTP/1.1: one gets it, the others go to the HTTP/1 side.
    @Test(.timeLimit(.minutes(1)))
    func concurrentRequestsToAnUnknownHTTP11ServerAllGetThrough() async throws {
        let certificates = try TestCertificates()
        let directory = try TestCertificates.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        try await PoolTest.withPool(tls: PinningTLSHandlerFactory(logger: PoolTest.logger)) { pool in
            let tls = UpstreamTLSSettings(caFile: paths.caBundle)
            try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await Self.send(Self.request(port: upstream.port, "/delay/50", tls: tls), pool: pool).status }
                }
                for try await status in group { #expect(status == 200) }
            }
            #expect(pool.http2ConnectionCount == 0)
            #expect(pool.waitingRequestCount == 0)
        }
        try await upstream.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func http2OverPlainHTTPIsPriorKnowledgeH2C() async throws {
        let origin = try await HTTP2TestOrigin.start()
        try await PoolTest.withPool { pool in
            for _ in 0..<3 {
                let outcome = try await Self.send(Self.request(port: origin.port, "/h2c", scheme: .http, version: .http2), pool: pool)
                #expect(outcome.status == 200)
                #expect(outcome.headers.first(name: "x-protocol") == "h2")
            }
            #expect(origin.connectionsAccepted == 1)
        }
        try await origin.shutdown()
    }
}
