@testable import GatewayListener
import NIOCore
import NIOEmbedded
import Testing

/// The two sides of a blind tunnel on embedded channels sharing one loop:
/// bytes cross, an EOF half-closes, silence closes both after the idle limit.
struct TunnelHandlerTests {
    let loop = EmbeddedEventLoop()

    func tunnel(idle: TimeAmount = .seconds(30)) throws -> (client: EmbeddedChannel, upstream: EmbeddedChannel, handlers: (TunnelHandler, TunnelHandler)) {
        let (clientSide, upstreamSide) = TunnelHandler.pair(idleTimeout: idle)
        let client = EmbeddedChannel(handler: clientSide, loop: loop)
        let upstream = EmbeddedChannel(handler: upstreamSide, loop: loop)
        try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        try upstream.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 2)).wait()
        return (client, upstream, (clientSide, upstreamSide))
    }

    @Test func bytesCrossInBothDirectionsAndAreCounted() throws {
        let (client, upstream, handlers) = try tunnel()
        try client.writeInbound(ByteBuffer(string: "hello"))
        client.pipeline.fireChannelReadComplete()
        #expect(try upstream.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "hello")
        try upstream.writeInbound(ByteBuffer(string: "world!"))
        upstream.pipeline.fireChannelReadComplete()
        #expect(try client.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) } == "world!")
        #expect(handlers.0.bytesRead == 5 && handlers.1.bytesRead == 6)
    }

    @Test func silenceBeyondTheIdleLimitClosesBothSides() throws {
        let (client, upstream, _) = try tunnel(idle: .seconds(30))
        loop.advanceTime(by: .seconds(20))
        try client.writeInbound(ByteBuffer(string: "x"))
        loop.advanceTime(by: .seconds(20))
        #expect(client.isActive && upstream.isActive, "the byte at 20 s moved the limit to 50 s")
        loop.advanceTime(by: .seconds(10))
        #expect(!client.isActive)
        #expect(!upstream.isActive)
    }

    @Test func oneSideClosingClosesTheOther() throws {
        let (client, upstream, _) = try tunnel()
        try upstream.close().wait()
        #expect(!client.isActive)
    }
}
