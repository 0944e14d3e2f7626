package import NIOCore

/// A stream of an HTTP/2 connection that its handler drives (no child channel),
/// as a member of its connection's current read.
package protocol HTTP2ReadBatchMember: AnyObject {
    /// In the batch already (set and cleared by ``HTTP2StreamIO`` only).
    var inReadBatch: Bool { get set }
    /// The connection's read that brought it frames is over.
    func readComplete()
}

/// What the handler of an HTTP/2 connection that drives its streams itself
/// (no child channels; upstream or client side) writes and reads them with:
///
/// - the connection's context, for the streams' frames;
/// - the read batch: the streams that got frames in the current read, each of
///   which hears the read's end once, as a child channel hears
///   `channelReadComplete` (one that joins while the batch runs, a stream's end
///   of read having handed on another's held frames, hears it too);
/// - the flush, made once at the end of the current read, or, for writes made
///   outside a read, once at the end of the loop's current tick. The streams a
///   tick opens or answers (a burst of requests) then share one flush: one TLS
///   record and one syscall, not one per stream. Nothing waits longer than the
///   tick that wrote it.
///
/// A class, so that a member's end of read may join the batch while it runs.
/// Used on the channel's loop only.
package final class HTTP2StreamIO<Member: HTTP2ReadBatchMember> {
    private var context: ChannelHandlerContext?
    private var batch: [Member] = []
    /// Between the connection's `channelRead` and the end of its `channelReadComplete`.
    package private(set) var isReading = false
    private var needsFlush = false
    private var flushScheduled = false
    /// The end-of-tick task, made once: it holds this object, and ``detach()``
    /// lets go of it with the connection.
    private var flushTask: (@Sendable () -> Void)?

    package init() {}

    /// The handler joined its pipeline.
    package func attach(_ context: ChannelHandlerContext) {
        self.context = context
    }

    /// The handler left it: nothing more is written.
    package func detach() {
        context = nil
        flushTask = nil
    }

    // MARK: Reads

    /// The connection's `channelRead`: frames come, the streams they touch join the batch.
    package func readStarted() {
        isReading = true
    }

    /// `member` got frames: its read ends with the connection's. False outside
    /// a read of the connection (the stream ends its read itself).
    package func join(_ member: Member) -> Bool {
        guard isReading else { return false }
        if !member.inReadBatch {
            member.inReadBatch = true
            batch.append(member)
        }
        return true
    }

    /// The connection's `channelReadComplete`: each stream the read touched
    /// ends its read, then what they wrote goes out in one flush.
    package func readEnded() {
        var index = 0
        while index < batch.count {
            let member = batch[index]
            index += 1
            member.inReadBatch = false
            member.readComplete()
        }
        batch.removeAll(keepingCapacity: true)
        isReading = false
        flushIfNeeded()
    }

    // MARK: Writes

    /// Writes a frame (`NIOAny(HTTP2Frame)`, wrapped where its type is known:
    /// a generic wrap here would cast it at run time on every write) down the
    /// connection's pipeline; fails the promise once the handler left it.
    package func write(_ frame: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let context else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(frame, promise: promise)
    }

    /// What was written goes out at the end of the current read, or of this loop tick.
    package func flushSoon() {
        needsFlush = true
        guard !isReading, !flushScheduled, let context else { return }
        flushScheduled = true
        context.eventLoop.execute(makeFlushTask(on: context.eventLoop))
    }

    /// What was written goes out now (before a RST_STREAM, which would drop
    /// the stream's frames NIOHTTP2 still holds for the flush).
    package func flushNow() {
        needsFlush = true
        flushIfNeeded()
    }

    private func makeFlushTask(on eventLoop: any EventLoop) -> @Sendable () -> Void {
        if let flushTask { return flushTask }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let made: @Sendable () -> Void = {
            let io = bound.value
            io.flushScheduled = false
            if !io.isReading { io.flushIfNeeded() }
        }
        flushTask = made
        return made
    }

    private func flushIfNeeded() {
        guard needsFlush else { return }
        needsFlush = false
        context?.flush()
    }
}
