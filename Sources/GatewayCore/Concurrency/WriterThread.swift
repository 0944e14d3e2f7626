import Foundation

/// A queue that a ``WriterThread`` drains: the queue, its bounds and its
/// counters belong to the conforming type; the thread only calls
/// ``drainOnWriterThread()`` once per ``WriterThread/schedule(_:)``.
public protocol WriterThreadWork: AnyObject, Sendable {
    /// Called on the writer thread: takes everything queued so far and
    /// formats and writes it (blocking I/O is fine here, never on an event loop).
    func drainOnWriterThread()
}

/// One plain OS thread that formats and writes what the event loops only
/// capture: trace records, their curl lines and body files. Not a Swift task:
/// blocking file I/O on the cooperative pool starves every task of the
/// process (the first version's `TraceWriter` did that per record).
///
/// Work is scheduled, not items: a ``WriterThreadWork`` queues its own items
/// under its own lock and asks to be scheduled only when it is not already
/// (one lock and no syscall per item while the thread has it pending). The
/// thread sleeps on a condition only while nothing is scheduled, so a signal
/// (a futex wake) is sent only to a sleeping thread. Once woken it lingers
/// (8 ms by default) before each drain, so that items gather: at most one
/// wake-up and one drain per linger however many lines and records the loops queue, instead
/// of a futex wake and a context switch on a loop's core per item (that cost
/// more than formatting on the loop did). At 15,000 traced requests a second
/// a 1 ms linger still meant about 800 wake-ups, sleeps and pairs of context
/// switches a second on the loop's core; 4 ms made it about 230. 8 ms cost
/// the traced config about 2 µs less per request again than 4 ms (interleaved
/// runs, 1 KiB × 50 connections: 52.0–52.6 against 52.7–57.2 µs, the loop's
/// caches disturbed half as often), and a line or record still reaches its file
/// within about ten milliseconds.
public final class WriterThread: @unchecked Sendable {
    /// The process's writer thread, started on first use.
    public static let shared = WriterThread(name: "gateway-writer")

    // `@unchecked Sendable`: `ready` and `sleeping` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var ready: [any WriterThreadWork] = []
    private var sleeping = false
    private let lingerMicroseconds: UInt32

    /// Starts a thread named `name` (tests make their own, to block it without
    /// stalling other tests' writers). The thread lives as long as the process.
    /// - Parameter linger: how long the thread waits, once woken, before it drains.
    public init(name: String, linger: Duration = .milliseconds(8)) {
        lingerMicroseconds = UInt32(clamping: linger.components.seconds * 1_000_000 + linger.components.attoseconds / 1_000_000_000_000)
        let thread = Thread { [self] in
            // Best effort on Linux: Foundation applies the name to the OS thread only
            // when it already knows the thread's pthread, which races with `start()`
            // (else the thread keeps its creator's name, e.g. a dispatch worker's).
            Thread.current.name = name
            run()
        }
        thread.name = name
        thread.start()
    }

    /// Asks the thread to call `work.drainOnWriterThread()` (once, soon).
    /// Callers keep their own "already scheduled" flag so that a work item is
    /// scheduled at most once until it is drained.
    public func schedule(_ work: any WriterThreadWork) {
        condition.lock()
        ready.append(work)
        let wake = sleeping
        condition.unlock()
        if wake { condition.signal() }
    }

    private func run() {
        // Swapped with `ready` on each wake-up (both keep their capacity): no allocation per batch.
        var batch: [any WriterThreadWork] = []
        while true {
            condition.lock()
            while ready.isEmpty {
                sleeping = true
                condition.wait()
                sleeping = false
            }
            // Also after a drain that found more work queued meanwhile: without
            // the linger, a drain right after another took only what was queued
            // while the previous one ran (a few records per file write when the
            // loop is slow, as under strace).
            if lingerMicroseconds > 0 {
                condition.unlock()
                usleep(lingerMicroseconds)
                condition.lock()
            }
            swap(&ready, &batch)
            condition.unlock()
            for work in batch { work.drainOnWriterThread() }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
