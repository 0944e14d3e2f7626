import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOHTTP1
import Testing

/// The client connection's handler on an `EmbeddedChannel` with a scripted
/// upstream: keep-alive, pipelining, refusals and the lifetime of exchanges,
/// without a socket.
struct ClientConnectionHandlerTests {
    @Test func forwardsOneRequestAndKeepsTheConnection() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n")
        #expect(harness.transport.attempts.count == 1)
        #expect(harness.transport.attempts.first?.request.url == "http://example.test/a")
        harness.answer(body: "hello")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(response.hasSuffix("\r\n\r\nhello"))
        #expect(!response.lowercased().contains("connection: close"))
        #expect(harness.channel.isActive)
    }

    /// A finished exchange is freed: the attempt's cancellation handle holds
    /// the exchange (as the pool's attempt does), so an exchange that kept the
    /// handle after its end leaked every request (350 MiB in a 5 s benchmark).
    @Test func finishedExchangesAreFreed() throws {
        let harness = try ClientConnectionHarness()
        for index in 0..<3 {
            try harness.send("GET http://example.test/\(index) HTTP/1.1\r\nHost: example.test\r\n\r\n")
            harness.answer(body: "ok")
            #expect(try harness.received().hasPrefix("HTTP/1.1 200 OK"))
        }
        #expect(harness.transport.attempts.count == 3)
        for attempt in harness.transport.attempts {
            #expect(attempt.delegate == nil)
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let harness = try ClientConnectionHarness()
        try harness.send(
            "GET http://example.test/1 HTTP/1.1\r\nHost: example.test\r\n\r\n"
                + "GET http://example.test/2 HTTP/1.1\r\nHost: example.test\r\n\r\n"
        )
        // The second waits until the first is answered.
        #expect(harness.transport.attempts.count == 1)
        harness.answer(body: "one")
        #expect(harness.transport.attempts.count == 2)
        #expect(harness.transport.attempts.last?.request.url == "http://example.test/2")
        harness.answer(body: "two")
        let response = try harness.received()
        let one = try #require(response.range(of: "one"))
        let two = try #require(response.range(of: "two"))
        #expect(one.lowerBound < two.lowerBound)
    }

    @Test func aRequestBodyGoesUpstreamAfterTheAttemptStarts() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("POST http://example.test/p HTTP/1.1\r\nHost: example.test\r\nContent-Length: 5\r\n\r\nhel")
        let attempt = try #require(harness.transport.attempts.first)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        try harness.send("lo")
        #expect(attempt.writer.body == "hello")
        #expect(attempt.writer.ended)
    }

    @Test func theClientGoingAwayCancelsTheAttempt() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("GET http://example.test/slow HTTP/1.1\r\nHost: example.test\r\n\r\n")
        let attempt = try #require(harness.transport.attempts.first)
        _ = try harness.channel.close().wait()
        #expect(attempt.cancelled)
        #expect(attempt.delegate == nil)
    }

    @Test func anOriginFormRequestIsRefusedAndTheConnectionCloses() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("GET /metrics HTTP/1.1\r\nHost: example.test\r\n\r\n")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 400"))
        #expect(response.contains("X-Gateway-Error: unsupported_target"))
        #expect(harness.transport.attempts.isEmpty)
        #expect(!harness.channel.isActive)
    }

    @Test func anUpstreamFailureBeforeTheHeadIsA502() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("GET http://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n")
        let attempt = try #require(harness.transport.attempts.first)
        attempt.delegate?.upstreamAttemptFailed(GatewayError(.connectionReset, "closed", upstream: "example.test:80"))
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 502"))
        #expect(response.contains("X-Gateway-Error:"))
    }
}

