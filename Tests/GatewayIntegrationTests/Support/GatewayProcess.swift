import Foundation
import GatewayTesting
import NIOConcurrencyHelpers

/// The real `gateway` executable in a child process, for signal handling tests.
final class GatewayProcess: Sendable {
    private let process: Process
    /// The child's standard output and error, read to their end.
    private let output: PipeReader

    /// The binary SwiftPM built next to the test bundle.
    static var executableURL: URL {
        let bundleDir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return bundleDir.appendingPathComponent("gateway")
    }

    /// `openFiles`: start it under these soft and hard `RLIMIT_NOFILE` limits (set by `sh`'s `ulimit`).
    /// `unprivileged`: run it as ``Unprivileged`` says (uid 65534, no capability), from a copy of the binary.
    init(
        arguments: [String], environment: [String: String] = [:], openFiles: (soft: Int, hard: Int)? = nil,
        unprivileged: Unprivileged? = nil
    ) throws {
        let process = Process()
        if let unprivileged {
            let (executable, prefix) = try unprivileged.command(for: Self.executableURL.path)
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = prefix + arguments
        } else if let openFiles {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -Sn \(openFiles.soft) && ulimit -Hn \(openFiles.hard) && exec \"$0\" \"$@\"", Self.executableURL.path] + arguments
        } else {
            process.executableURL = Self.executableURL
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = pipe
        self.process = process
        try ProcessRunner.launch(process)
        // Read on a thread of its own (see `PipeReader`), after the launch: the
        // child holds the write end, and the parent's copy closes with `pipe`.
        output = PipeReader(pipe.fileHandleForReading)
    }

    var log: String { String(decoding: output.bytes, as: UTF8.self) }
    var pid: Int32 { process.processIdentifier }

    /// Waits until the log contains `text` (bounded).
    func waitForLog(_ text: String, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if log.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// The port from a line like `proxy listening on 127.0.0.1:PORT`.
    func listeningPort(_ listener: String) async -> Int? {
        guard await waitForLog("\(listener) listening on") else { return nil }
        for line in log.split(separator: "\n") where line.contains("\(listener) listening on") {
            // `... listening on 127.0.0.1:PORT ...`: the digits after the last colon of that word.
            guard let on = line.range(of: "listening on ") else { continue }
            let address = line[on.upperBound...].prefix { $0 != " " }
            if let colon = address.lastIndex(of: ":") {
                return Int(address[address.index(after: colon)...].prefix { $0.isNumber })
            }
        }
        return nil
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits for exit (bounded); returns the exit status, or nil on timeout (then kills).
    func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !process.isRunning {
                // The exit can be seen before the last lines are read from the pipe:
                // wait (bounded) for its end, so that `log` holds everything written.
                let drained = ContinuousClock.now + .seconds(2)
                while !output.finished.hasFired, ContinuousClock.now < drained {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                return process.terminationStatus
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        process.terminate()
        return nil
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}
