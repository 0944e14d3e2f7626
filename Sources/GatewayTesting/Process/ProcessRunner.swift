import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs an external program (curl, openssl, ...) and captures its output, with a timeout.
///
/// stdout and stderr are read concurrently on their own threads, so large outputs never
/// deadlock; stdin is written on its own thread. On timeout (or cancellation) the process gets
/// SIGTERM, then SIGKILL two seconds later (to its whole process group).
public enum ProcessRunner {
    /// How long to wait for the output pipes to reach EOF after the process exited (a
    /// grandchild may keep them open).
    static let pipeGracePeriod: Duration = .seconds(3)
    /// How long a process has between SIGTERM and SIGKILL.
    static let killGracePeriod: Duration = .seconds(2)

    private static let ignoreSIGPIPE: Void = {
        // Writing stdin to a child that exited must fail with EPIPE, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Runs `executable` (a path, or a bare name looked up on `PATH`) with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: variables set for the child, over the current environment if
    ///     `inheritEnvironment` (the default), or alone otherwise.
    ///   - stdin: bytes written to the child's stdin, which is then closed; without them the child
    ///     reads `/dev/null`.
    ///   - timeout: after it the process is killed and the result has `timedOut == true`.
    /// - Throws: ``ProcessRunnerError/executableNotFound(_:)``, errors launching the process, or
    ///   `CancellationError` if the task was cancelled (the process is killed first).
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        stdin: [UInt8]? = nil,
        timeout: Duration = .seconds(30),
        inheritEnvironment: Bool = true
    ) async throws -> ProcessResult {
        _ = Self.ignoreSIGPIPE
        guard let path = which(executable) else {
            throw ProcessRunnerError.executableNotFound(executable)
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if environment != nil || !inheritEnvironment {
            var merged = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
            merged.merge(environment ?? [:]) { _, new in new }
            process.environment = merged
        }
        let stdoutPipe = Pipe()
        let stderrPipe = Pipe()
        let stdinPipe = stdin.map { _ in Pipe() }
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        process.standardInput = stdinPipe ?? FileHandle.nullDevice

        let exited = OneShotSignal()
        process.terminationHandler = { _ in exited.fire() }
        try Self.launch(process)
        let pid = process.processIdentifier

        // `Process.run()` already closed our copies of the child's pipe ends, so EOF arrives
        // when the child (and anything it spawned) exits.
        let stdoutReader = PipeReader(stdoutPipe.fileHandleForReading)
        let stderrReader = PipeReader(stderrPipe.fileHandleForReading)
        if let stdinPipe, let stdin {
            PipeWriter.start(stdinPipe.fileHandleForWriting, bytes: stdin)
        }

        var timedOut = false
        if await !exited.wait(timeout: timeout) {
            timedOut = !Task.isCancelled
            await Self.terminate(pid: pid, exited: exited)
        }
        let pipeDeadline = ContinuousClock.now + Self.pipeGracePeriod
        _ = await stdoutReader.finished.wait(timeout: ContinuousClock.now.duration(to: pipeDeadline))
        _ = await stderrReader.finished.wait(timeout: ContinuousClock.now.duration(to: pipeDeadline))
        if !timedOut {
            try Task.checkCancellation()
        }

        // Foundation traps on reading the status of a process still running (unkillable).
        let hasExited = exited.hasFired
        return ProcessResult(
            status: hasExited ? process.terminationStatus : -1,
            stdout: stdoutReader.bytes,
            stderr: stderrReader.bytes,
            timedOut: timedOut,
            terminatedBySignal: hasExited ? process.terminationReason == .uncaughtSignal : true
        )
    }

    /// SIGTERM, then SIGKILL if the process is still there after the grace period.
    ///
    /// Foundation spawns the child in its own process group (`POSIX_SPAWN_SETPGROUP`), so the
    /// signals go to the whole group: a shell's children die too and release the output pipes.
    private static func terminate(pid: Int32, exited: OneShotSignal) async {
        Self.signalGroup(pid, SIGTERM)
        // Waits below must not be cut short by the caller's cancellation.
        let stopped = await Task.detached { await exited.wait(timeout: Self.killGracePeriod) }.value
        if !stopped {
            Self.signalGroup(pid, SIGKILL)
            _ = await Task.detached { await exited.wait(timeout: .seconds(10)) }.value
        }
    }

    private static func signalGroup(_ pid: Int32, _ signal: Int32) {
        if kill(-pid, signal) != 0 {
            _ = kill(pid, signal)
        }
    }
}
