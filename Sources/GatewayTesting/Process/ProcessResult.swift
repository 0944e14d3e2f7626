/// What ``ProcessRunner/run(_:_:environment:stdin:timeout:inheritEnvironment:)`` observed.
public struct ProcessResult: Sendable, Equatable {
    /// The exit status, or the signal number if ``terminatedBySignal``.
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: [UInt8]
    /// True if the timeout passed and the process was killed.
    public var timedOut: Bool
    /// True if the process ended through a signal (including the kill after a timeout).
    public var terminatedBySignal: Bool

    public init(status: Int32, stdout: [UInt8], stderr: [UInt8], timedOut: Bool, terminatedBySignal: Bool = false) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.timedOut = timedOut
        self.terminatedBySignal = terminatedBySignal
    }

    /// `stdout` decoded as UTF-8 (invalid bytes replaced).
    public var stdoutString: String {
        String(decoding: self.stdout, as: UTF8.self)
    }

    /// `stderr` decoded as UTF-8 (invalid bytes replaced).
    public var stderrString: String {
        String(decoding: self.stderr, as: UTF8.self)
    }

    /// True if the process exited normally with status 0 before the timeout.
    public var succeeded: Bool {
        self.status == 0 && !self.timedOut && !self.terminatedBySignal
    }
}

/// Failures to start a process.
public enum ProcessRunnerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A bare name was not found on `PATH`, or a path is not executable.
    case executableNotFound(String)

    public var description: String {
        switch self {
        case .executableNotFound(let name):
            return "executable not found: \(name)"
        }
    }
}
