import GatewayConfig
import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The upgrade path on `EmbeddedChannel`s: a WebSocket handshake is an
/// exchange marked for the upstream; its 101 turns the client's connection
/// and the upstream's into a tunnel; anything else is a normal response.
struct WebSocketUpgradeTests {
    static let handshake = "GET http://chat.test/ws?room=1 HTTP/1.1\r\nHost: chat.test\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    static let switching = UpstreamResponseHead(
        status: .switchingProtocols, headers: ["Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="], declaredLength: nil, hasBody: false
    )

    /// A client connection with one observer recording what it is told, and the tunnel's idle limit.
    static func harness(idle: Duration = .seconds(300)) throws -> (ClientConnectionHarness, RecordingObserver) {
        var config = GatewayConfig()
        config.limits.tunnelIdleTimeout = idle
        let observer = RecordingObserver()
        let harness = try ClientConnectionHarness(
            config: config, routes: RouteTable(byUpstream: [:], unconfigured: UpstreamRoute(observers: [observer]))
        )
        return (harness, observer)
    }

    /// The upstream's side of the tunnel, on the client's loop as the pool's handshake connection is.
    static func upstreamChannel(_ harness: ClientConnectionHarness) throws -> EmbeddedChannel {
        let peer = EmbeddedChannel(loop: harness.channel.embeddedEventLoop)
        try peer.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
        return peer
    }

    /// Answers the handshake in flight with 101, `leftover` read after it.
    static func upgrade(_ harness: ClientConnectionHarness, peer: EmbeddedChannel, leftover: String? = nil) throws {
        let attempt = try #require(harness.transport.attempts.last)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        attempt.delegate?.upstreamUpgraded(switching, tunnel: UpstreamTunnel(channel: peer, leftover: leftover.map { ByteBuffer(string: $0) }))
    }

    static func sent(_ channel: EmbeddedChannel) throws -> String {
        var text = ""
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text
    }

    @Test func onlyAWebSocketHandshakeIsMarkedForTheUpstream() throws {
        let (harness, _) = try Self.harness()
        try harness.send(Self.handshake)
        let request = try #require(harness.transport.attempts.last?.request)
        #expect(request.isWebSocketHandshake)
        // The client's hop-by-hop fields go; the handshake's own are set for the next hop.
        #expect(request.headers["upgrade"] == ["websocket"] && request.headers["connection"] == ["Upgrade"])
        #expect(request.headers["sec-websocket-key"] == ["dGhlIHNhbXBsZSBub25jZQ=="])

        let (other, _) = try Self.harness()
        try other.send("GET http://chat.test/ HTTP/1.1\r\nHost: chat.test\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
        let plain = try #require(other.transport.attempts.last?.request)
        #expect(!plain.isWebSocketHandshake)
        #expect(plain.headers["upgrade"].isEmpty && plain.headers["http2-settings"].isEmpty)
    }

    @Test func aSwitchingProtocolsAnswerMakesATunnel() throws {
        let (harness, observer) = try Self.harness()
        // A client that sends a frame before the 101: held, not parsed, and passed on after it.
        try harness.send(Self.handshake + "early")
        let peer = try Self.upstreamChannel(harness)
        try Self.upgrade(harness, peer: peer, leftover: "first-frame")

        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(response.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(response.contains("Connection: Upgrade\r\nUpgrade: websocket\r\n"))
        #expect(response.contains("Via: 1.1 gateway\r\n"))
        #expect(!response.lowercased().contains("content-length") && !response.lowercased().contains("transfer-encoding"))
        #expect(response.hasSuffix("\r\n\r\nfirst-frame"))
        #expect(try Self.sent(peer) == "early")

        try harness.send("client-frame")
        #expect(try Self.sent(peer) == "client-frame")
        try peer.writeInbound(ByteBuffer(string: "server-frame"))
        #expect(try harness.received() == "server-frame")
        #expect(throws: (any Error).self) { try harness.channel.pipeline.syncOperations.context(handlerType: ClientConnectionHandler.self) }
        #expect(observer.events == ["head 101", "finish 101", "opened"])

        try peer.close().wait()
        harness.channel.embeddedEventLoop.run()
        #expect(!harness.channel.isActive)
        #expect(observer.events.last == "closed 17 23")
    }

    @Test func anyOtherAnswerIsAResponseAfterWhichTheConnectionCloses() throws {
        let (harness, observer) = try Self.harness()
        try harness.send(Self.handshake)
        harness.answer(status: .forbidden, body: "no")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        #expect(response.contains("Connection: close\r\n"))
        #expect(response.hasSuffix("\r\n\r\nno"))
        #expect(!harness.channel.isActive)
        #expect(observer.events == ["head 403", "finish 403"])
    }

    @Test func theClientGoingAwayMidHandshakeCancelsItsAttempt() throws {
        let (harness, observer) = try Self.harness()
        try harness.send(Self.handshake)
        let attempt = try #require(harness.transport.attempts.last)
        let delegate = attempt.delegate
        try harness.channel.close().wait()
        #expect(attempt.cancelled)
        // A 101 that comes anyway finds no exchange: its connection is closed.
        let peer = try Self.upstreamChannel(harness)
        delegate?.upstreamUpgraded(Self.switching, tunnel: UpstreamTunnel(channel: peer, leftover: nil))
        #expect(!peer.isActive)
        #expect(observer.events == ["finish cancelled"])
    }

    @Test func theUpstreamClosingClosesTheClient() throws {
        let (harness, observer) = try Self.harness()
        try harness.send(Self.handshake)
        let peer = try Self.upstreamChannel(harness)
        try Self.upgrade(harness, peer: peer)
        _ = try harness.received()
        try peer.writeInbound(ByteBuffer(string: "bye"))
        try peer.close().wait()
        harness.channel.embeddedEventLoop.run()
        #expect(try harness.received() == "bye")
        #expect(!harness.channel.isActive)
        #expect(observer.events.last == "closed 0 3")
    }

    @Test func anIdleTunnelClosesAtTheTunnelIdleTimeout() throws {
        let (harness, observer) = try Self.harness(idle: .seconds(30))
        try harness.send(Self.handshake)
        let peer = try Self.upstreamChannel(harness)
        try Self.upgrade(harness, peer: peer)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        try harness.send("x")
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        #expect(harness.channel.isActive && peer.isActive)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(31))
        #expect(!harness.channel.isActive && !peer.isActive)
        #expect(observer.events.last == "closed 1 0")
    }

    /// Draining leaves an open WebSocket be; the drain timeout closes it.
    @Test func theDrainTimeoutClosesAnOpenWebSocket() throws {
        let (harness, observer) = try Self.harness()
        try harness.send(Self.handshake)
        let peer = try Self.upstreamChannel(harness)
        try Self.upgrade(harness, peer: peer)
        harness.tracker.beginDraining()
        harness.channel.embeddedEventLoop.run()
        #expect(harness.channel.isActive)
        harness.tracker.abortAll()
        harness.channel.embeddedEventLoop.run()
        #expect(!harness.channel.isActive && !peer.isActive)
        #expect(observer.events.last == "closed 0 0")
    }
}

/// Records what an exchange's observation is told, in order.
final class RecordingObserver: ExchangeObserver, @unchecked Sendable {
    private(set) var events: [String] = []

    func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        Observation(owner: self)
    }

    final class Observation: ExchangeObservation {
        let owner: RecordingObserver

        init(owner: RecordingObserver) {
            self.owner = owner
        }

        func requestBodyPart(_ buffer: ByteBuffer) {}
        func responseHead(status: Int, fields: ResponseFields, via: String?) { owner.events.append("head \(status)") }
        func finish(_ outcome: ExchangeOutcome) {
            owner.events.append(outcome.cancelled ? "finish cancelled" : "finish \(outcome.status.map(String.init) ?? "-")")
        }
        func tunnelOpened() { owner.events.append("opened") }
        func tunnelClosed(_ summary: TunnelSummary) { owner.events.append("closed \(summary.bytesFromClient) \(summary.bytesFromUpstream)") }
    }
}
