import GatewayConfig
import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOHTTP1
import Testing

/// Client limits on the real pipeline: body and send timeouts, the connection cap.
struct ClientLimitsTests {
    static func config(_ edit: (inout ListenerLimits) -> Void) -> GatewayConfig {
        var config = GatewayConfig()
        edit(&config.limits)
        return config
    }

    @Test func aBodyThatStopsComingGets408AndFreesTheUpstreamAttempt() throws {
        let harness = try ClientConnectionHarness(config: Self.config { $0.bodyTimeout = .seconds(2) })
        try harness.send("POST http://example.test/p HTTP/1.1\r\nHost: example.test\r\nContent-Length: 100000\r\n\r\n0123456789")
        let attempt = try #require(harness.transport.attempts.first)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 408 "), "\(response)")
        #expect(response.lowercased().contains("x-gateway-error: body_timeout"))
        #expect(attempt.writer.aborted, "the upstream connection is given up, not held")
        #expect(!harness.channel.isActive)
    }

    @Test func aClientThatDoesNotReadIsClosedAfterSendTimeout() throws {
        let harness = try ClientConnectionHarness(config: Self.config { $0.sendTimeout = .seconds(3) })
        try harness.send("GET http://example.test/big HTTP/1.1\r\nHost: example.test\r\n\r\n")
        let attempt = try #require(harness.transport.attempts.first)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        attempt.delegate?.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: ["Content-Length": "10"], declaredLength: 10, hasBody: true))
        harness.channel.isWritable = false
        harness.channel.pipeline.fireChannelWritabilityChanged()
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(!harness.channel.isActive)
        #expect(attempt.writer.aborted)
    }

    static let slowRequest = "GET http://example.test/slow HTTP/1.1\r\nHost: example.test\r\n\r\n"

    /// One client address may hold `max_connections_per_client` at most. At
    /// the cap the connection idle longest is closed to admit the new one
    /// (an app leaking keep-alive connections must not lock out its address);
    /// only when every one has a request in flight is the new one refused, and
    /// counted. A slot frees when one closes.
    @Test func thePerClientCapClosesAnIdleConnectionBeforeRefusing() throws {
        let events = RefusalEvents()
        let tracker = ConnectionTracker(events: events)
        let config = Self.config { $0.maxConnectionsPerClient = 2 }
        let first = try ClientConnectionHarness(config: config, tracker: tracker)
        let second = try ClientConnectionHarness(config: config, tracker: tracker)
        try second.send(Self.slowRequest)

        let third = try ClientConnectionHarness(config: config, tracker: tracker)
        first.channel.embeddedEventLoop.run()
        #expect(!first.channel.isActive, "the idle connection made room")
        #expect(second.channel.isActive && third.channel.isActive, "the busy one is kept")
        #expect(events.reasons.isEmpty)

        try third.send(Self.slowRequest)
        let fourth = try ClientConnectionHarness(config: config, tracker: tracker)
        #expect(!fourth.channel.isActive, "every connection is busy: refused")
        #expect(events.reasons == ["max_connections_per_client"])
        #expect(tracker.count == 2)

        try third.channel.close().wait()
        third.channel.embeddedEventLoop.run()
        let fifth = try ClientConnectionHarness(config: config, tracker: tracker)
        #expect(fifth.channel.isActive)
        #expect(tracker.count == 2)
    }

    /// The same for `max_client_connections`; a connection idle again after its
    /// exchange can be closed, one whose request arrived is not.
    @Test func theTotalCapClosesAnIdleConnectionBeforeRefusing() throws {
        let config = Self.config { $0.maxClientConnections = 1 }
        let first = try ClientConnectionHarness(config: config)
        try first.send(Self.slowRequest)
        let second = try ClientConnectionHarness(config: config, tracker: first.tracker)
        #expect(!second.channel.isActive, "the only connection is busy: refused")

        first.answer(body: "done")
        #expect(try first.received().hasSuffix("done"))
        let third = try ClientConnectionHarness(config: config, tracker: first.tracker)
        first.channel.embeddedEventLoop.run()
        #expect(!first.channel.isActive, "idle again after its exchange: closed for the new one")
        #expect(third.channel.isActive)
        #expect(first.tracker.count == 1)
    }

    /// A connection chosen to make room whose next request arrived in the
    /// meantime is answered first, then closed.
    @Test func anEvictedConnectionWithARequestArrivingFinishesItFirst() throws {
        let config = Self.config { $0.maxClientConnections = 1 }
        let first = try ClientConnectionHarness(config: config)
        let second = try ClientConnectionHarness(config: config, tracker: first.tracker)
        // The eviction is queued on first's loop; its request comes before it runs.
        try first.send(Self.slowRequest)
        #expect(first.channel.isActive && second.channel.isActive)
        first.answer(body: "served")
        first.channel.embeddedEventLoop.run()
        #expect(try first.received().hasSuffix("served"))
        #expect(!first.channel.isActive, "closed after its exchange")
    }
}

/// The refusals a tracker reports, by reason.
final class RefusalEvents: GatewayEvents, @unchecked Sendable {
    private(set) var reasons: [String] = []

    func clientConnectionRefused(reason: String) {
        reasons.append(reason)
    }
}
