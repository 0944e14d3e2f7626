public import NIOCore

/// Runs a task's jobs on a NIO event loop, so a connection's async code stays on
/// the thread that owns its channels: resuming after a socket read or write is
/// a cheap in-loop enqueue instead of a hop to the global concurrency pool and
/// back. Used with `withTaskExecutorPreference` around a connection task.
public final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    public let eventLoop: any EventLoop

    public init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
