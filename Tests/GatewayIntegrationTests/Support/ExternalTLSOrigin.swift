import Foundation
import GatewayTesting

/// A TLS origin run as a child process (`openssl s_server -www`, `nghttpd`),
/// its output in a log file; stopped with `stop()`.
final class ExternalTLSOrigin: @unchecked Sendable {
    let process: Process
    let port: Int
    let logPath: String

    private init(process: Process, port: Int, logPath: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning { process.terminate() }
    }

    /// `openssl s_server -www` on 127.0.0.1 (a port it picks, read from its
    /// `ACCEPT` line), presenting the PKI's server chain, requiring a client
    /// certificate chaining to `clientCA` (`-Verify 1 -verify_return_error`).
    static func opensslRequiringClientCertificate(_ pki: TestCertificates.Paths, clientCA: String, in dir: String) async throws -> ExternalTLSOrigin {
        let arguments = [
            "s_server", "-accept", "127.0.0.1:0", "-cert", pki.leaf, "-cert_chain", pki.intermediate, "-key", pki.leafKey,
            "-www", "-Verify", "1", "-verify_return_error", "-CAfile", clientCA,
        ]
        let origin = try launch("openssl", arguments, log: "\(dir)/s_server.log", port: 0)
        for _ in 0..<200 {
            if let line = origin.log.split(separator: "\n").first(where: { $0.hasPrefix("ACCEPT ") }),
                let port = line.split(separator: ":").last.flatMap({ Int($0) })
            {
                return ExternalTLSOrigin(process: origin.process, port: port, logPath: origin.logPath)
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        origin.stop()
        throw OriginError(description: "openssl s_server did not start: \(origin.log)")
    }

    /// `nghttpd --verify-client` (HTTP/2 only; asks for a client certificate and
    /// ends the handshake without one) serving `htdocs`.
    static func nghttpdRequiringClientCertificate(_ pki: TestCertificates.Paths, htdocs: String, in dir: String) async throws -> ExternalTLSOrigin {
        let port = try freeLoopbackPort()
        let origin = try launch("nghttpd", ["-v", "--verify-client", "-d", htdocs, "\(port)", pki.leafKey, pki.serverChain], log: "\(dir)/nghttpd.log", port: port)
        return try await origin.accepting(name: "nghttpd")
    }

    /// Itself, once its port accepts connections (bounded: 5 s); stopped and an error otherwise.
    func accepting(name: String) async throws -> ExternalTLSOrigin {
        for _ in 0..<200 {
            if let probe = try? await RawTCPConnection.connect(port: port, timeout: .seconds(1)) {
                await probe.close()
                return self
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(25))
        }
        stop()
        throw OriginError(description: "\(name) did not start: \(log)")
    }

    static func launch(_ name: String, _ arguments: [String], log: String, port: Int) throws -> ExternalTLSOrigin {
        guard let path = which(name) else { throw OriginError(description: "\(name) is not installed (.ci/run installs it)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try ProcessRunner.launch(process)
        return ExternalTLSOrigin(process: process, port: port, logPath: log)
    }

    struct OriginError: Error, CustomStringConvertible {
        var description: String
    }
}
