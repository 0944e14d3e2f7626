import Foundation
import GatewayTesting

/// A Python helper server for tests (an OTLP collector over HTTP or gRPC): it
/// prints `listening PORT` once bound; its output is read on a thread of its
/// own (``PipeReader``).
enum ListeningPython {
    /// Starts `python3 -u -c script arguments...` and waits (bounded) for its `listening PORT` line.
    static func start(script: String, arguments: [String] = []) async throws -> (process: Process, output: PipeReader, port: Int) {
        let process = Process()
        guard let python = which("python3") else { throw OTLPReceiver.ReceiverError(output: "python3 not found") }
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u", "-c", script] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try ProcessRunner.launch(process)
        let output = PipeReader(pipe.fileHandleForReading)
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let text = String(decoding: output.bytes, as: UTF8.self)
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening ") }), let port = Int(line.dropFirst("listening ".count)) {
                return (process, output, port)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        process.terminate()
        throw OTLPReceiver.ReceiverError(output: String(decoding: output.bytes, as: UTF8.self))
    }
}
