import Foundation
import GatewayObservability
import GatewayTesting
import Testing

/// `gateway run --debug` with the real binary: traces survive a SIGHUP reload
/// of a file that says nothing about `debug`, name the bound port, and keep
/// secrets out of the trace file, stderr and `trace show`.
@Suite("Debug traces: --debug across SIGHUP", .timeLimit(.minutes(3)))
struct TraceDebugReloadTests {
    @Test func debugFlagSurvivesReloadAndSecretsStayOut() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        let configPath = "\(dir)/gateway.yaml"
        func writeConfig(_ comment: String) throws {
            try """
            # \(comment)
            listen:
              proxy: 127.0.0.1:0
              admin: 127.0.0.1:0
            access:
              allow: ["*"]
            trace:
              file: \(file)

            """.write(toFile: configPath, atomically: true, encoding: .utf8)
        }
        try writeConfig("first")
        let gateway = try GatewayProcess(arguments: ["run", "--config", configPath, "--debug"])
        let port = try #require(await gateway.listeningPort("proxy"), "\(gateway.log)")
        let secret = "cli-secret-bearer-0815"
        func send(_ path: String) async throws {
            let result = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-x", "http://127.0.0.1:\(port)", "-H", "Authorization: Bearer \(secret)", upstream.url(path)],
                                                    environment: ["NO_PROXY": "", "no_proxy": ""])
            #expect(result.status == 0, "\(result.stderrString)")
        }

        try await send("/echo/before")
        let first = try #require(try await TraceTests.readRecords(file, count: 1).first)
        #expect(first.curl.hasPrefix("curl -x 'http://127.0.0.1:\(port)' "), "\(first.curl)")

        try writeConfig("second")
        gateway.signal(SIGHUP)
        #expect(await gateway.waitForLog("config reloaded"), "\(gateway.log)")
        try await send("/echo/after")
        let records = try await TraceTests.readRecords(file, count: 2)
        #expect(records.map(\.endpoint).last?.hasSuffix("/echo/after") == true, "debug lost on reload: \(records.map(\.endpoint))")
        #expect(await gateway.waitForLog("trace \(records.last?.id ?? "?"): curl -x"), "\(gateway.log)")

        let show = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["trace", "show", first.id, "--file", file])
        #expect(show.status == 0)
        let traceText = try String(contentsOfFile: file, encoding: .utf8)
        #expect(!traceText.contains(secret))
        #expect(!gateway.log.contains(secret))
        #expect(!show.stdoutString.contains(secret))
        #expect(show.stdoutString.contains("REDACTED_AUTHORIZATION"))

        gateway.signal(SIGTERM)
        #expect(await gateway.waitForExit() == 0)
    }
}
