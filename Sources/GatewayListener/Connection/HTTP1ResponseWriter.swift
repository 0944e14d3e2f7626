import GatewayCore
import NIOCore
import NIOHTTP1

/// Writes the responses of one HTTP/1.1 client connection as bytes
/// (``ResponseFraming`` serializes heads, chunks are framed here): a streamed
/// response's head held until its first body part, the body parts (chunked
/// or not), the end (the last chunk, trailers when the client asked for
/// them), whole responses the gateway makes itself, and the flushes, batched
/// per loop tick (``LoopFlushBatch``).
///
/// One per connection, made with its ``ClientConnectionHandler`` and reused
/// for every response: it allocates nothing per request. It decides nothing
/// about the connection (keep-alive, pipelining, when it closes): the handler
/// decides and tells it what to write. A class, not a struct in the handler:
/// a write or flush can call back into the handler (a write promise that
/// closes the channel, a writability change), which may write again.
final class HTTP1ResponseWriter {
    private var context: ChannelHandlerContext?
    /// The channel's allocator, read once (through the context it cost a
    /// retain of the pipeline and the channel on every response head).
    private(set) var allocator = ByteBufferAllocator()
    /// This loop's batch of flushes (nil: flush at once), and whether this
    /// connection waits in it.
    private var flushBatch: LoopFlushBatch?
    private var flushIsDeferred = false
    /// The response being written goes in chunks.
    private var chunked = false
    /// The response head taken for the exchange in flight and not written yet:
    /// it goes out with the first body part (one write for a small response),
    /// or before any other write or flush (``writePendingHead(with:)``).
    private var pendingHead: ByteBuffer?
    /// The last response head's buffer, written again for the next head: once
    /// its write is done this is the only reference, and clearing it allocates nothing.
    private var spareHeadBuffer: ByteBuffer?
    /// The fields of the request in flight (a reference, not a copy): whether
    /// it said `TE: trailers` is read only when an upstream sends trailers.
    var requestFields = RequestFields()

    init() {}

    /// The request in flight said `TE: trailers`: an upstream's trailers go to it in the last chunk.
    var clientAcceptsTrailers: Bool {
        requestFields.field("te", lists: "trailers")
    }

    /// The writer's channel, once its handler joined the pipeline.
    func attach(_ context: ChannelHandlerContext, flushBatch: LoopFlushBatch?) {
        self.context = context
        allocator = context.channel.allocator
        self.flushBatch = flushBatch
    }

    /// The handler left the pipeline: nothing written stays behind in the channel.
    func detach() {
        flushDeferred()
        context = nil
    }

    /// `100 Continue`, at once.
    func writeContinue() {
        context?.writeAndFlush(NIOAny(ResponseFraming.bareHead(version: .http1_1, code: 100, reason: "Continue")), promise: nil)
    }

    /// Frames a streamed response's head and keeps it (it goes out with the
    /// first body part, or before anything else: ``writePendingHead(with:)``).
    /// Returns whether the connection stays open after it, and whether its
    /// body is written.
    func takeHead(_ head: UpstreamResponseHead, method: HTTPMethod, version: HTTPVersion, keepAlive: Bool) -> (keepAlive: Bool, writesBody: Bool) {
        let framing = ResponseFraming(
            status: head.status, fields: head.fields, declaredLength: head.declaredLength,
            requestMethod: method, requestVersion: version, keepAlive: keepAlive,
            via: RequestRouter.responseVia, allocator: allocator,
            spare: spareHeadBuffer.take()
        )
        chunked = framing.chunked
        pendingHead = framing.head
        return (framing.keepAlive, !framing.bodyless)
    }

    /// Drops a head not written yet (an aborted response: what was written goes out before the close).
    func dropPendingHead() {
        pendingHead = nil
    }

    /// Writes the response head taken by ``takeHead(_:method:version:keepAlive:)``,
    /// if it has not gone yet, with `body` after it in the same buffer when
    /// both fit in a spare head buffer (``ByteBuffer/maxSpareHeadBytes``): a
    /// small response goes as one write, not two. Returns whether `body` went with it.
    @discardableResult
    func writePendingHead(with body: ByteBuffer? = nil) -> Bool {
        guard let context, var head = pendingHead.take() else { return false }
        var merged = false
        if let body, head.readableBytes + body.readableBytes <= ByteBuffer.maxSpareHeadBytes {
            // The head's storage is referenced only here (the spare was taken for it): appended in place.
            head.writeImmutableBuffer(body)
            merged = true
        }
        // Kept for the next head: the write below holds the only other reference.
        spareHeadBuffer = ByteBuffer.spare(after: head)
        context.write(NIOAny(head), promise: nil)
        return merged
    }

    /// A part of the response body, written unflushed: the exchange flushes
    /// (``flush()``) once the parts of one upstream read are written.
    func writeBodyPart(_ buffer: ByteBuffer) {
        guard let context else { return }
        guard chunked else {
            if !writePendingHead(with: buffer) { context.write(NIOAny(buffer), promise: nil) }
            return
        }
        writePendingHead()
        // A chunk of size 0 would end the body: an empty part writes nothing.
        guard buffer.readableBytes > 0 else { return }
        context.write(NIOAny(ChunkedFraming.sizeLine(buffer.readableBytes, allocator: allocator)), promise: nil)
        context.write(NIOAny(buffer), promise: nil)
        context.write(NIOAny(ChunkedFraming.after(data: true, isLast: false)), promise: nil)
    }

    /// The head if it waits, then a flush at the end of the tick.
    func flush() {
        guard context != nil else { return }
        writePendingHead()
        flushSoon()
    }

    /// Flushes at the end of this loop's tick, with the other connections'
    /// responses of the tick (``LoopFlushBatch``); at once without a batch.
    func flushSoon() {
        guard let context else { return }
        guard let flushBatch else { return context.flush() }
        guard !flushIsDeferred else { return }
        flushIsDeferred = true
        flushBatch.add(self)
    }

    /// The deferred flush, at the end of the tick (or before a close).
    func flushDeferred() {
        guard flushIsDeferred else { return }
        flushIsDeferred = false
        context?.flush()
    }

    /// The end of the response's body, flushed: the last chunk, or no bytes at
    /// all. `observed`: the caller needs to know when the response went out (an
    /// empty write then carries the promise); else nil.
    func writeEnd(observed: Bool, trailers: HTTPHeaders? = nil) -> EventLoopFuture<Void>? {
        guard let context else { return nil }
        writePendingHead()
        let chunked = self.chunked
        self.chunked = false
        if chunked, let trailers, !trailers.isEmpty, clientAcceptsTrailers {
            // The client asked for trailers (`TE: trailers`, a gRPC-Web or gRPC client over HTTP/1.1).
            let last = ChunkedFraming.lastChunk(trailers: trailers, allocator: allocator)
            return context.writeAndFlush(NIOAny(last))
        }
        guard observed else {
            // Nobody waits on it: no promise (the last chunk, if any, goes out with the flush).
            if chunked {
                context.write(NIOAny(ChunkedFraming.after(data: false, isLast: true)), promise: nil)
            }
            flushSoon()
            return nil
        }
        return context.writeAndFlush(NIOAny(ChunkedFraming.after(data: false, isLast: chunked)))
    }

    /// Head and buffered body of a whole response (the end is written by the
    /// caller, ``writeEnd(observed:trailers:)``). Returns the body bytes written.
    func writeWhole(_ framing: ResponseFraming, body: ProxyBody) -> Int {
        chunked = framing.chunked
        guard let context else { return 0 }
        context.write(NIOAny(framing.head), promise: nil)
        guard !framing.bodyless, case .bytes(let buffer) = body.storage, buffer.readableBytes > 0 else { return 0 }
        writeBodyPart(buffer)
        return buffer.readableBytes
    }
}
