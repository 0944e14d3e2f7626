import ArgumentParser
import Foundation
import GatewayObservability

extension TraceCommand {
    /// `gateway trace replay ID [--direct]`: runs the record's curl line again
    /// with `/bin/sh -c` and prints status and timings next to the original's.
    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send a recorded request again and compare status and timings with the original.",
            discussion: """
                Runs the `trace curl ID` line (through the gateway, `curl -x`, so auth, retries and \
                metrics apply again; the gateway must be running) with /bin/sh, adding curl's -w timing \
                variables. --direct runs the line as sent upstream: its credentials are shell variables \
                (${GITHUB_TOKEN}), export them first: it refuses to run while one is unset. Exits with \
                curl's status when curl fails.
                """
        )
        @OptionGroup var source: Source
        @Argument var id: String
        @Flag(name: .long, help: "Replay the request as sent upstream (credentials from exported env vars), not through the gateway.")
        var direct = false

        /// curl's `-w`: one marked line with the timing variables.
        static let writeOut = "\\ngateway-replay %{http_code} %{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total} %{size_download}\\n"

        func run() throws {
            let record = try source.record(id)
            let line = direct ? record.curlDirect : record.curl
            try Self.checkBody(line)
            var environment = ProcessInfo.processInfo.environment
            let unset = Self.variables(in: line).filter { (environment[$0] ?? "").isEmpty }
            let redacted = unset.filter { $0.hasPrefix("REDACTED_") }
            let credentials = unset.filter { !$0.hasPrefix("REDACTED_") }
            if direct, !credentials.isEmpty {
                // Straight to the upstream nothing else puts the credential in:
                // an empty one would only earn a 401 (and count against the account).
                throw CommandFailure(Self.unsetCredentialsMessage(credentials))
            }
            for name in credentials {
                warn("$\(name) is not set (a credential the config reads from the environment); export \(name)=... to send it. Replaying with an empty value.")
            }
            if !redacted.isEmpty {
                let names = redacted.map { "$\($0)" }.joined(separator: ", ")
                let gatewayNote = direct ? "" : " (the gateway still puts the upstream's configured credential in its place)"
                note("the client's redacted values \(names) are sent empty unless exported\(gatewayNote).")
            }
            if Self.hasRedactedBody(line) {
                note("the recorded body has redacted fields (\"[REDACTED]\") or was not shown (\"\(TraceRedactor.unredactableBody)\"): it is replayed as recorded.")
            }
            var command = line + " -sS -o /dev/null -w " + ShellQuoting.singleQuoted(Self.writeOut)
            if direct {
                command += " --noproxy '*'"
            } else {
                // `-x` must win over the user's NO_PROXY.
                environment["NO_PROXY"] = nil
                environment["no_proxy"] = nil
            }
            let (status, output) = try Self.shell(command, environment: environment)
            let timings = CurlTimings(writeOut: output)
            print(ReplayTable(original: record, replay: timings, direct: direct).text, terminator: "")
            guard status == 0 else {
                warn("curl failed with exit status \(status)")
                throw ExitCode(status)
            }
        }

        /// Why `--direct` refuses to run: the unset credential variables, by name only.
        static func unsetCredentialsMessage(_ names: [String]) -> String {
            let listed = names.map { "$\($0)" }.joined(separator: ", ")
            let exports = names.map { "export \($0)=..." }.joined(separator: "; ")
            let verb = names.count == 1 ? "is" : "are"
            return "\(listed) \(verb) not set: --direct sends the request straight to the upstream with the credential"
                + " the config reads from the environment. \(exports) first (nothing was sent)."
        }

        /// Whether the body (inline or its file) holds the trace's redaction
        /// marker, or is the text that replaces a body that could not be redacted.
        static func hasRedactedBody(_ line: String) -> Bool {
            if let path = bodyFile(in: line) {
                guard let data = FileManager.default.contents(atPath: path) else { return false }
                return data.range(of: Data("[REDACTED]".utf8)) != nil || data.range(of: Data(TraceRedactor.unredactableBody.utf8)) != nil
            }
            return line.contains("[REDACTED]") || line.contains(TraceRedactor.unredactableBody)
        }

        /// Refuses a line whose body was not captured or whose body file is gone.
        static func checkBody(_ line: String) throws {
            if line.contains("'@<body not captured") {
                throw CommandFailure("the request body was not captured (streamed and too large), so the request cannot be replayed")
            }
            guard let path = bodyFile(in: line) else { return }
            guard FileManager.default.fileExists(atPath: path) else {
                throw CommandFailure("body file \(path) no longer exists (body files are deleted when their trace file rotates out)")
            }
        }

        /// The path in `--data-binary '@PATH'`, read back as the shell would.
        static func bodyFile(in line: String) -> String? {
            guard case .file(let path) = CurlLineRequest(line: line)?.body else { return nil }
            return path
        }

        /// The `${NAME}` variables a line expands (outside single quotes), in order, without repeats.
        static func variables(in line: String) -> [String] {
            var names: [String] = []
            var inSingle = false, inDouble = false, escaped = false
            var index = line.startIndex
            while index < line.endIndex {
                let ch = line[index]
                index = line.index(after: index)
                if escaped { escaped = false; continue }
                switch ch {
                case "'" where !inDouble: inSingle.toggle()
                case "\"" where !inSingle: inDouble.toggle()
                case "\\" where !inSingle: escaped = true
                case "$" where !inSingle && line[index...].hasPrefix("{"):
                    guard let close = line[index...].firstIndex(of: "}") else { return names }
                    let name = String(line[line.index(after: index)..<close])
                    if !names.contains(name) { names.append(name) }
                    index = line.index(after: close)
                default: break
                }
            }
            return names
        }

        /// Runs `/bin/sh -c command`; stderr goes to ours. Returns the exit status and stdout.
        static func shell(_ command: String, environment: [String: String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            process.environment = environment
            let stdout = Pipe()
            process.standardOutput = stdout
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let data = stdout.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }

        private func warn(_ message: String) {
            FileHandle.standardError.write(Data("gateway: \(message)\n".utf8))
        }

        private func note(_ message: String) {
            FileHandle.standardError.write(Data("gateway: note: \(message)\n".utf8))
        }
    }
}
