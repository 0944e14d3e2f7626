import NIOConcurrencyHelpers
import NIOCore

/// The flushes of an event loop's client connections (their
/// ``HTTP1ResponseWriter``s), made together at the end of the loop's current
/// tick (after every I/O event it read).
///
/// A response written and flushed at once wakes its client whenever the
/// client went to sleep meanwhile: under load the gateway answered a request
/// from one connection, the client (on another CPU) woke, read it and slept
/// again before the next, and each wake-up was a cross-CPU interrupt. Flushed
/// together, a tick's responses reach their clients in one burst, which one
/// wake-up serves. Nothing waits longer than the tick that made it: a tick
/// with one event (a quiet gateway) flushes right after it. Netty's
/// `FlushConsolidationHandler` makes the same trade within one connection.
final class LoopFlushBatch {
    private let eventLoop: any EventLoop
    private var writers: [HTTP1ResponseWriter] = []
    private var running: [HTTP1ResponseWriter] = []
    private var scheduled = false
    /// The task, made once: a closure made per tick was an allocation per
    /// tick. It holds the batch, which lives as long as its loop anyway
    /// (``LoopFlushBatches`` keeps it).
    private var task: (@Sendable () -> Void)?

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// `writer` flushes at the end of this tick (one task per tick, run
    /// after its I/O events: no wake-up of the loop, no extra syscall).
    func add(_ writer: HTTP1ResponseWriter) {
        writers.append(writer)
        guard !scheduled else { return }
        scheduled = true
        eventLoop.execute(flushTask())
    }

    private func flushTask() -> @Sendable () -> Void {
        if let task { return task }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let made: @Sendable () -> Void = { bound.value.flushAll() }
        task = made
        return made
    }

    private func flushAll() {
        scheduled = false
        swap(&writers, &running)
        for writer in running { writer.flushDeferred() }
        running.removeAll(keepingCapacity: true)
    }
}

/// One ``LoopFlushBatch`` per event loop, found when a connection's handler
/// joins its pipeline (not per request).
final class LoopFlushBatches: Sendable {
    private let batches = NIOLockedValueBox<[ObjectIdentifier: NIOLoopBound<LoopFlushBatch>]>([:])

    init() {}

    /// Called on `eventLoop`.
    func batch(for eventLoop: any EventLoop) -> LoopFlushBatch {
        batches.withLockedValue { batches in
            let id = ObjectIdentifier(eventLoop)
            if let existing = batches[id] { return existing.value }
            let batch = LoopFlushBatch(eventLoop: eventLoop)
            batches[id] = NIOLoopBound(batch, eventLoop: eventLoop)
            return batch
        }
    }
}
