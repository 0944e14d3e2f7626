package import NIOCore

/// What the handler of an HTTP/2 connection that drives its streams itself
/// (no child channels; upstream or client side) writes and reads them with:
/// the connection's context for their frames, the read batch whose end each
/// stream hears (``HTTP2ReadBatch``), and the flush made once per read or loop
/// tick (``TickFlusher``). Used on the channel's loop only.
package final class HTTP2StreamIO<Member: HTTP2ReadBatchMember> {
    private var context: ChannelHandlerContext?
    private let flusher = TickFlusher()
    private let batch = HTTP2ReadBatch<Member>()

    package init() {}

    /// The handler joined its pipeline.
    package func attach(_ context: ChannelHandlerContext) {
        self.context = context
        flusher.attach(context)
    }

    /// The handler left it: nothing more is written.
    package func detach() {
        context = nil
        flusher.detach()
    }

    /// The connection's `channelRead`: frames come, the streams they touch join the batch.
    package func readStarted() {
        flusher.readStarted()
    }

    /// The connection's `channelReadComplete`: each stream the read touched
    /// ends its read, then what they wrote goes out in one flush.
    package func readEnded() {
        batch.endRead()
        flusher.readEnded()
    }

    /// `member` got frames: its read ends with the connection's. False outside
    /// a read of the connection (the stream ends its read itself).
    package func join(_ member: Member) -> Bool {
        guard flusher.isReading else { return false }
        batch.join(member)
        return true
    }

    /// Writes a frame (an `HTTP2Frame`) down the connection's pipeline; fails
    /// the promise once the handler left it.
    package func write<Frame>(_ frame: Frame, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(NIOAny(frame), promise: promise)
    }

    /// What was written goes out at the end of the current read, or of this loop tick.
    package func flushSoon() {
        flusher.flushSoon()
    }

    /// What was written goes out now (before a RST_STREAM).
    package func flushNow() {
        flusher.flushNow()
    }
}
