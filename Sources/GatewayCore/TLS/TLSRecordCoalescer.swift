public import NIOCore

/// Sits right above a TLS handler and hands it one buffer per flush instead of
/// one per write: the small writes between two flushes (an HTTP/2 connection's
/// frames: HEADERS, each DATA frame's 9-byte header and its payload, WINDOW_UPDATE,
/// many streams' worth in one event-loop tick) are copied into one reused buffer.
///
/// NIOSSL encrypts each write it is given as a TLS record of its own (an
/// `SSL_write`, a seal, a 22-byte header and tag, and in BoringSSL a write
/// buffer allocated and freed), so an intercepted HTTP/2 request cost about 5.7
/// of those. One flush now makes one record (up to `maxBatchBytes`).
///
/// Writes larger than `maxCopiedWriteBytes` are not copied: the batch so far
/// goes first, then the write as it is, in order. Promises are kept: the batch
/// carries the first write's promise down and the others follow it. The handler
/// holds nothing across a flush, and what it holds when the channel closes goes
/// down before the close, for the channel to fail as it fails unflushed writes.
public final class TLSRecordCoalescer: ChannelOutboundHandler, RemovableChannelHandler {
    public typealias OutboundIn = IOData
    public typealias OutboundOut = IOData

    /// A TLS record's largest plaintext.
    public static let maxBatchBytes = 16_384
    /// Writes above this go down as they are (a copy would cost more than a record).
    public static let maxCopiedWriteBytes = 4_096
    /// A new batch's capacity; it grows to what a flush holds and is kept for the next.
    static let initialBatchBytes = 1_024

    private var batch: ByteBuffer?
    private var batchPromise: EventLoopPromise<Void>?
    /// While the batch is with the TLS handler (inside our own write and flush):
    /// writes made meanwhile (a promise's callback writing more) go straight down.
    private var handingDown = false

    public init() {}

    public func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !handingDown, case .byteBuffer(var buffer) = unwrapOutboundIn(data),
              buffer.readableBytes <= Self.maxCopiedWriteBytes
        else {
            writeBatch(context: context)
            context.write(data, promise: promise)
            return
        }
        if let batch, batch.readableBytes + buffer.readableBytes > Self.maxBatchBytes {
            writeBatch(context: context)
        }
        // Grown as the flushes need (at most one record), so a connection that sends little holds little.
        if batch == nil { batch = context.channel.allocator.buffer(capacity: Self.initialBatchBytes) }
        batch!.writeBuffer(&buffer)
        if let promise {
            if let batchPromise { batchPromise.futureResult.cascade(to: promise) } else { batchPromise = promise }
        }
    }

    public func flush(context: ChannelHandlerContext) {
        guard !handingDown, batch.map({ $0.readableBytes > 0 }) == true else {
            // Inside our own flush (a promise's callback flushing), or nothing batched.
            context.flush()
            return
        }
        handingDown = true
        handDown(context: context)
        context.flush()
        handingDown = false
        // The TLS handler encrypted the batch on that flush and let it go: its storage is
        // ours again, and cleared in place (held below, it would be copied: still right).
        batch?.clear()
    }

    public func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writeBatch(context: context)
        context.close(mode: mode, promise: promise)
    }

    public func handlerRemoved(context: ChannelHandlerContext) {
        writeBatch(context: context)
    }

    /// The batch so far goes down unflushed, and the next bytes get storage of their own.
    private func writeBatch(context: ChannelHandlerContext) {
        guard !handingDown, batch.map({ $0.readableBytes > 0 }) == true else { return }
        handingDown = true
        handDown(context: context)
        handingDown = false
        batch = nil
    }

    /// Writes the batch with its promise; no copy of it outlives the call.
    private func handDown(context: ChannelHandlerContext) {
        let promise = batchPromise
        batchPromise = nil
        context.write(wrapOutboundOut(.byteBuffer(batch!)), promise: promise)
    }
}
