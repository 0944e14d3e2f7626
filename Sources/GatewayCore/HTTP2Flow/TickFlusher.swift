package import NIOCore

/// The flushes of one connection that many streams write to (an HTTP/2
/// connection's, either side): made once at the end of the connection's
/// current read, or, for writes made outside a read, once at the end of the
/// loop's current tick. The streams a tick opens or answers (a burst of
/// requests) then share one flush: one TLS record and one syscall, not one
/// per stream. Nothing waits longer than the tick that wrote it.
///
/// Also tells whether the connection is inside a read, which its streams'
/// read batches (``HTTP2ReadBatch``) follow. Used on the channel's loop only.
package final class TickFlusher {
    private var context: ChannelHandlerContext?
    private var needsFlush = false
    private var scheduled = false
    /// Between the connection's `channelRead` and the end of its `channelReadComplete`.
    package private(set) var isReading = false
    /// The end-of-tick task, made once: it holds this flusher, and
    /// ``detach()`` lets go of it with the connection.
    private var task: (@Sendable () -> Void)?

    package init() {}

    package func attach(_ context: ChannelHandlerContext) {
        self.context = context
    }

    package func detach() {
        context = nil
        task = nil
    }

    package func readStarted() {
        isReading = true
    }

    /// The read is over: what it wrote goes out.
    package func readEnded() {
        isReading = false
        flushIfNeeded()
    }

    /// What was written goes out at the end of the current read, or of this loop tick.
    package func flushSoon() {
        needsFlush = true
        guard !isReading, !scheduled, let context else { return }
        scheduled = true
        context.eventLoop.execute(flushTask(on: context.eventLoop))
    }

    /// What was written goes out now (before a RST_STREAM, which would drop
    /// the stream's frames NIOHTTP2 still holds for the flush).
    package func flushNow() {
        needsFlush = true
        flushIfNeeded()
    }

    private func flushTask(on eventLoop: any EventLoop) -> @Sendable () -> Void {
        if let task { return task }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let made: @Sendable () -> Void = {
            let flusher = bound.value
            flusher.scheduled = false
            if !flusher.isReading { flusher.flushIfNeeded() }
        }
        task = made
        return made
    }

    private func flushIfNeeded() {
        guard needsFlush else { return }
        needsFlush = false
        context?.flush()
    }
}
