public import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension ProcessRunner {
    /// Starts `process` (like `process.run()`) from a fresh thread whose signal mask is empty.
    ///
    /// Swift concurrency's worker threads block most signals (SIGTERM, SIGHUP, SIGINT, ...), and
    /// `posix_spawn`, which Foundation uses, hands the calling thread's mask to the child: a
    /// process started from an async function would ignore `kill -TERM` until it unblocks the
    /// signal itself. Use this for long-running children that tests signal (e.g. the gateway).
    ///
    /// Blocks the caller only for the spawn itself (milliseconds).
    public static func launch(_ process: Process) throws {
        let box = UncheckedProcess(process: process)
        let outcome = NIOLockedValueBox<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var empty = sigset_t()
            sigemptyset(&empty)
            pthread_sigmask(SIG_SETMASK, &empty, nil)
            let result = Result { try box.process.run() }
            outcome.withLockedValue { $0 = result }
            done.signal()
        }
        thread.name = "ProcessRunner.launch"
        thread.start()
        done.wait()
        try outcome.withLockedValue { $0 }!.get()
    }

    private struct UncheckedProcess: @unchecked Sendable {
        // The process is handed to the spawning thread and used by it alone until it signals.
        let process: Process
    }
}
