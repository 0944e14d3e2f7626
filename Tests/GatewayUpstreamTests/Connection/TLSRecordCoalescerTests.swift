import GatewayCore
import NIOCore
import NIOEmbedded
import Testing

/// The coalescer hands the TLS handler below one buffer per flush: the bytes
/// and their order as written, every promise kept, nothing sent twice.
@Suite struct TLSRecordCoalescerTests {
    private func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(TLSRecordCoalescer())
        return channel
    }

    private func buffer(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
        var out: [String] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { out.append(String(buffer: buffer)) }
        return out
    }

    @Test func smallWritesBetweenTwoFlushesGoDownAsOneBuffer() throws {
        let channel = try channel()
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        channel.write(buffer("HEADERS "), promise: promises[0])
        channel.write(buffer("DATA-HEAD "), promise: nil)
        channel.write(buffer("payload"), promise: promises[1])
        channel.write(buffer(" END"), promise: promises[2])
        #expect(try outbound(channel).isEmpty, "nothing goes down before the flush")
        channel.flush()
        #expect(try outbound(channel) == ["HEADERS DATA-HEAD payload END"])
        for promise in promises { try promise.futureResult.wait() }
        // The next flush's bytes alone: the buffer was cleared, not sent again.
        channel.writeAndFlush(buffer("next"), promise: nil)
        #expect(try outbound(channel) == ["next"])
        _ = try channel.finish()
    }

    @Test func aLargeWriteGoesAsItIsInOrder() throws {
        let channel = try channel()
        let large = String(repeating: "x", count: TLSRecordCoalescer.maxCopiedWriteBytes + 1)
        channel.write(buffer("a"), promise: nil)
        channel.write(buffer("b"), promise: nil)
        channel.write(buffer(large), promise: nil)
        channel.write(buffer("c"), promise: nil)
        channel.flush()
        #expect(try outbound(channel) == ["ab", large, "c"])
        _ = try channel.finish()
    }

    @Test func aBatchIsNeverLargerThanOneRecord() throws {
        let channel = try channel()
        let chunk = String(repeating: "y", count: 4_000)
        for _ in 0..<5 { channel.write(buffer(chunk), promise: nil) }
        channel.flush()
        let out = try outbound(channel)
        #expect(out.map(\.count) == [16_000, 4_000])
        #expect(out.allSatisfy { $0.utf8.count <= TLSRecordCoalescer.maxBatchBytes })
        _ = try channel.finish()
    }

    @Test func aWriteMadeByAPromiseCallbackDuringTheFlushIsSentOnce() throws {
        let channel = try channel()
        let first = channel.eventLoop.makePromise(of: Void.self)
        first.futureResult.whenSuccess {
            channel.write(ByteBuffer(string: "second"), promise: nil)
            channel.flush()
        }
        channel.write(buffer("first"), promise: first)
        channel.flush()
        #expect(try outbound(channel) == ["first", "second"])
        _ = try channel.finish()
    }

    @Test func unflushedWritesGoDownBeforeTheCloseForTheChannelToFail() throws {
        // Below the coalescer, a stand-in for the socket: it fails unflushed writes on close, as NIO's channels do.
        let channel = EmbeddedChannel()
        let socket = ClosingSocket()
        try channel.pipeline.syncOperations.addHandler(socket)
        try channel.pipeline.syncOperations.addHandler(TLSRecordCoalescer())
        let promise = channel.eventLoop.makePromise(of: Void.self)
        var failed = false
        promise.futureResult.whenFailure { _ in failed = true }
        channel.write(buffer("never "), promise: promise)
        channel.write(buffer("flushed"), promise: nil)
        channel.close(promise: nil)
        #expect(socket.unflushed == ["never flushed"])
        #expect(failed)
    }
}

/// Keeps the writes it is given unflushed and fails them when the channel closes.
private final class ClosingSocket: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    private(set) var unflushed: [String] = []
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        unflushed.append(String(buffer: unwrapOutboundIn(data)))
        if let promise { promises.append(promise) }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        for pending in promises { pending.fail(ChannelError.ioOnClosedChannel) }
        promises = []
        context.close(mode: mode, promise: promise)
    }
}
