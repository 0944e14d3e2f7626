import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

/// The bytes ``HTTP1ResponseWriter`` writes, on its own over an embedded
/// channel (no connection handler, no exchange): the head held for the first
/// body part, chunk framing, the end with or without trailers, and flushes at
/// once or at the end of the tick.
@Suite struct HTTP1ResponseWriterTests {
    /// A handler that does nothing: its context is where the writer writes.
    private final class Probe: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
    }

    private struct Setup {
        let channel: EmbeddedChannel
        let writer: HTTP1ResponseWriter

        init(batched: Bool = false) throws {
            channel = EmbeddedChannel(handler: Probe())
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            let context = try channel.pipeline.syncOperations.context(handlerType: Probe.self)
            writer = HTTP1ResponseWriter()
            writer.attach(context, flushBatch: batched ? LoopFlushBatch(eventLoop: channel.embeddedEventLoop) : nil)
        }

        /// Each buffer flushed to the channel, in order, as text.
        func writes() throws -> [String] {
            var writes: [String] = []
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { writes.append(String(buffer: buffer)) }
            return writes
        }
    }

    private func head(length: Int?) -> UpstreamResponseHead {
        var headers = HTTPHeaders()
        if let length { headers.add(name: "Content-Length", value: "\(length)") }
        return UpstreamResponseHead(status: .ok, headers: headers, declaredLength: length, hasBody: length.map { $0 > 0 } ?? true)
    }

    @Test func aSmallResponseIsOneWriteWithItsHead() throws {
        let setup = try Setup()
        let framing = setup.writer.takeHead(head(length: 5), method: .GET, version: .http1_1, keepAlive: true)
        #expect(framing.keepAlive)
        #expect(framing.writesBody)
        #expect(try setup.writes().isEmpty, "the head waits for the first body part")
        setup.writer.writeBodyPart(ByteBuffer(string: "hello"))
        #expect(setup.writer.writeEnd(observed: false) == nil, "nobody waits on the end: no promise")
        let written = try setup.writes()
        #expect(written.count == 1)
        #expect(written.first?.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n") == true)
        #expect(written.first?.hasSuffix("\r\n\r\nhello") == true)
    }

    @Test func anUnknownLengthGoesInChunksAndAnEmptyPartWritesNothing() throws {
        let setup = try Setup()
        let framing = setup.writer.takeHead(head(length: nil), method: .GET, version: .http1_1, keepAlive: true)
        #expect(framing.keepAlive)
        setup.writer.writeBodyPart(ByteBuffer(string: "hello"))
        setup.writer.writeBodyPart(ByteBuffer())
        setup.writer.flush()
        let written = try setup.writes()
        #expect(written.count == 4)
        #expect(written.first?.contains("Transfer-Encoding: chunked\r\n") == true)
        #expect(Array(written.dropFirst()) == ["5\r\n", "hello", "\r\n"])
        _ = setup.writer.writeEnd(observed: false)
        #expect(try setup.writes() == ["0\r\n\r\n"])
    }

    @Test func trailersGoOnlyToAClientThatAskedForThem() throws {
        let trailers: HTTPHeaders = ["grpc-status": "0"]
        for asked in [false, true] {
            let setup = try Setup()
            let fields: HTTPHeaders = asked ? ["TE": "trailers"] : [:]
            setup.writer.requestFields = RequestFields(fields)
            _ = setup.writer.takeHead(head(length: nil), method: .POST, version: .http1_1, keepAlive: true)
            setup.writer.flush()
            _ = try setup.writes()
            let end = setup.writer.writeEnd(observed: false, trailers: trailers)
            #expect((end != nil) == asked, "the last chunk with trailers is flushed with a promise")
            #expect(try setup.writes() == [asked ? "0\r\ngrpc-status: 0\r\n\r\n" : "0\r\n\r\n"])
        }
    }

    @Test func anObservedEndOfABodylessResponseCarriesAPromise() throws {
        let setup = try Setup()
        let framing = setup.writer.takeHead(head(length: 3), method: .HEAD, version: .http1_1, keepAlive: true)
        #expect(!framing.writesBody)
        let end = try #require(setup.writer.writeEnd(observed: true))
        try end.wait()
        let written = try setup.writes()
        #expect(written.first?.hasPrefix("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n") == true)
        #expect(written.dropFirst().joined().isEmpty, "an empty write carries the promise")
    }

    @Test func aDroppedHeadIsNeverWritten() throws {
        let setup = try Setup()
        _ = setup.writer.takeHead(head(length: 5), method: .GET, version: .http1_1, keepAlive: true)
        setup.writer.dropPendingHead()
        setup.writer.flush()
        #expect(try setup.writes().isEmpty)
    }

    @Test func aWholeResponseIsWrittenAsItIs() throws {
        let setup = try Setup()
        let framing = ResponseFraming(
            status: .forbidden, headers: ["Content-Length": "2"], declaredLength: 2,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: false
        )
        #expect(setup.writer.writeWhole(framing, body: .bytes(ByteBuffer(string: "no"))) == 2)
        _ = setup.writer.writeEnd(observed: false)
        let written = try setup.writes().joined()
        #expect(written.hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        #expect(written.contains("Connection: close\r\n"))
        #expect(written.hasSuffix("\r\n\r\nno"))
    }

    @Test func aBatchedFlushWaitsForTheEndOfTheTick() throws {
        let setup = try Setup(batched: true)
        _ = setup.writer.takeHead(head(length: 2), method: .GET, version: .http1_1, keepAlive: true)
        setup.writer.writeBodyPart(ByteBuffer(string: "ok"))
        setup.writer.flush()
        #expect(try setup.writes().isEmpty, "written, its flush waiting in the loop's batch")
        setup.channel.embeddedEventLoop.run()
        #expect(try setup.writes().count == 1)
    }

    @Test func detachingFlushesWhatWaits() throws {
        let setup = try Setup(batched: true)
        _ = setup.writer.takeHead(head(length: 2), method: .GET, version: .http1_1, keepAlive: true)
        setup.writer.writeBodyPart(ByteBuffer(string: "ok"))
        setup.writer.flush()
        setup.writer.detach()
        #expect(try setup.writes().count == 1)
        setup.channel.embeddedEventLoop.run()  // the batch's flush finds nothing left
        #expect(try setup.writes().isEmpty)
    }
}
