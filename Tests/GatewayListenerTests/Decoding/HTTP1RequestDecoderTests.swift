import GatewayCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayListener

/// The decoder in a pipeline: parts handed on as they are framed, a malformed
/// request passed on as the error the client is answered with, and the bytes
/// after a `CONNECT` handed to whoever takes the connection over when it leaves.
@Suite struct HTTP1RequestDecoderTests {
    @Test func partsAndErrorsGoDownThePipeline() throws {
        let channel = EmbeddedChannel(handler: HTTP1RequestDecoder(maxHeadBytes: 1024))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        let refused = #expect(throws: GatewayError.self) {
            try channel.writeInbound(ByteBuffer(string: "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\nGET http://a.test/ HTTP/1.1\r\nBad Header: x\r\n\r\n"))
        }
        #expect(refused?.code == .badRequest)
        guard case .head(let head) = try channel.readInbound(as: ClientRequestPart.self) else {
            Issue.record("expected a head without a body")
            return
        }
        #expect(head.uri == "http://a.test/")
        guard case .end = try channel.readInbound(as: ClientRequestPart.self) else {
            Issue.record("expected the end")
            return
        }
        #expect(try channel.readInbound(as: ClientRequestPart.self) == nil)
    }

    @Test func bytesAfterAConnectAreHandedOnWhenTheDecoderLeaves() throws {
        let decoder = HTTP1RequestDecoder(maxHeadBytes: 1024)
        let channel = EmbeddedChannel(handler: decoder)
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(ByteBuffer(string: "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\nCLIENT HELLO"))
        try channel.writeInbound(ByteBuffer(string: " AND MORE"))
        guard case .head(let head) = try channel.readInbound(as: ClientRequestPart.self) else {
            Issue.record("expected a head")
            return
        }
        #expect(head.method == .CONNECT)
        guard case .end = try channel.readInbound(as: ClientRequestPart.self) else {
            Issue.record("expected the end")
            return
        }
        #expect(try channel.readInbound(as: ClientRequestPart.self) == nil)
        try channel.pipeline.syncOperations.removeHandler(decoder).wait()
        #expect(try channel.readInbound(as: ByteBuffer.self).map { String(buffer: $0) } == "CLIENT HELLO AND MORE")
    }
}
