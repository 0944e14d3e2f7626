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
        attempt.delegate?.upstreamExchangeStarted(attempt.writer)
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
        attempt.delegate?.upstreamExchangeStarted(attempt.writer)
        attempt.delegate?.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: ["Content-Length": "10"], declaredLength: 10, hasBody: true))
        harness.channel.isWritable = false
        harness.channel.pipeline.fireChannelWritabilityChanged()
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(3))
        #expect(!harness.channel.isActive)
        #expect(attempt.writer.aborted)
    }

    /// One client address may hold `max_connections_per_client` at most; the
    /// rest are closed at once and counted; a slot frees when one closes.
    @Test func connectionsBeyondThePerClientCapAreClosedAndCounted() throws {
        let events = RefusalEvents()
        let tracker = ConnectionTracker(events: events)
        let config = Self.config { $0.maxConnectionsPerClient = 2 }
        let first = try ClientConnectionHarness(config: config, tracker: tracker)
        let second = try ClientConnectionHarness(config: config, tracker: tracker)
        let third = try ClientConnectionHarness(config: config, tracker: tracker)
        #expect(first.channel.isActive && second.channel.isActive && !third.channel.isActive)
        #expect(events.reasons == ["max_connections_per_client"])
        try first.channel.close().wait()
        first.channel.embeddedEventLoop.run()
        let fourth = try ClientConnectionHarness(config: config, tracker: tracker)
        #expect(fourth.channel.isActive)
        #expect(tracker.count == 2)
    }

    @Test func connectionsBeyondTheCapAreClosedAtOnce() throws {
        let config = Self.config { $0.maxClientConnections = 1 }
        let first = try ClientConnectionHarness(config: config)
        #expect(first.channel.isActive)
        let second = try ClientConnectionHarness(config: config, tracker: first.tracker)
        #expect(!second.channel.isActive)
        #expect(first.tracker.count == 1)
    }
}

/// The refusals a tracker reports, by reason.
final class RefusalEvents: GatewayEvents, @unchecked Sendable {
    private(set) var reasons: [String] = []

    func clientConnectionRefused(reason: String) {
        reasons.append(reason)
    }
}
