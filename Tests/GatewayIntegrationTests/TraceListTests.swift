import Foundation
import GatewayObservability
import GatewayTesting
import Testing

/// Issue 52: `gateway trace list` with no trace file printed nothing and
/// exited 0, and its endpoint column showed the raw path (one line per id).
/// The real binary: it now says where it looked and how to turn traces on,
/// and shows the endpoint as the metrics template it.
@Suite("trace list: where it looked, endpoint templates", .timeLimit(.minutes(2)))
struct TraceListTests {
    /// A config whose trace file is `dir/traces/trace.jsonl`; `endpoints:` for upstream `api`.
    static func writeConfig(_ dir: String, debug: Bool) throws -> String {
        let path = "\(dir)/gateway.yaml"
        let yaml = """
            debug: \(debug)
            state_dir: \(dir)/state
            trace:
              file: \(dir)/traces/trace.jsonl
            upstreams:
              - name: api
                hosts: [api.test]
                endpoints: ["GET /repos/{owner}/{repo}/issues/{number}"]
            """
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func noTraceFileSaysWhereItLookedAndHowToTurnTracesOn() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try Self.writeConfig(dir, debug: false)

        let fromConfig = try await TraceReplayTests.gatewayCLI(["trace", "list", "--config", config])
        #expect(fromConfig.status != 0, "\(fromConfig.stderrString)")
        #expect(fromConfig.stdoutString.isEmpty, "\(fromConfig.stdoutString)")
        let said = fromConfig.stderrString
        #expect(said.contains("\(dir)/traces/trace.jsonl"), "the path it looked at: \(said)")
        #expect(said.contains("trace.file of \(config)"), "\(said)")
        #expect(said.contains("gateway run --debug") && said.contains("debug: true"), "how to turn traces on: \(said)")
        #expect(!said.contains("Usage:"), "\(said)")

        // debug already on: the file appears once the gateway proxies a request.
        let debugOn = try await TraceReplayTests.gatewayCLI(["trace", "list", "--config", try Self.writeConfig(dir, debug: true)])
        #expect(debugOn.status != 0)
        #expect(debugOn.stderrString.contains("debug is on there"), "\(debugOn.stderrString)")

        let fromFile = try await TraceReplayTests.gatewayCLI(["trace", "list", "--file", "\(dir)/nowhere.jsonl"])
        #expect(fromFile.status != 0)
        #expect(fromFile.stderrString.contains("\(dir)/nowhere.jsonl"), "\(fromFile.stderrString)")
        #expect(fromFile.stderrString.contains("gateway run --debug"), "\(fromFile.stderrString)")

        // The other subcommands read the same files and say the same.
        let har = try await TraceReplayTests.gatewayCLI(["trace", "har", "--file", "\(dir)/nowhere.jsonl"])
        #expect(har.status != 0 && har.stdoutString.isEmpty)
        #expect(har.stderrString.contains("no trace file"), "\(har.stderrString)")

        // An existing but empty file: nothing to list, said on stderr.
        FileManager.default.createFile(atPath: "\(dir)/empty.jsonl", contents: Data())
        let empty = try await TraceReplayTests.gatewayCLI(["trace", "list", "--file", "\(dir)/empty.jsonl"])
        #expect(empty.status == 0 && empty.stdoutString.isEmpty)
        #expect(empty.stderrString.contains("no exchange yet"), "\(empty.stderrString)")
    }

    /// Configured `endpoints:` templates first, then numeric/UUID/hex
    /// segments as `{id}`: the same names as the metrics.
    @Test func endpointColumnShowsTheMetricsTemplate() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = try Self.writeConfig(dir, debug: true)
        try FileManager.default.createDirectory(atPath: "\(dir)/traces", withIntermediateDirectories: true)
        var configured = TraceReplayTests.record("configured")
        configured.upstream = "api"
        configured.endpoint = "api.test/repos/apple/swift-nio/issues/2871"
        var automatic = TraceReplayTests.record("automatic")
        automatic.endpoint = "other.test:8443/users/42/files/123e4567-e89b-12d3-a456-426614174000/blob/5f2b9c0e1a3d4e6f"
        var connect = TraceReplayTests.record("connect")
        connect.method = "CONNECT"
        connect.endpoint = "tunnel.test:443"
        try TraceReplayTests.writeTrace("\(dir)/traces/trace.jsonl", [configured, automatic, connect])

        let list = try await TraceReplayTests.gatewayCLI(["trace", "list", "--config", config])
        #expect(list.status == 0, "\(list.stderrString)")
        let lines = list.stdoutString.split(separator: "\n")
        try #require(lines.count == 3, "\(list.stdoutString)")
        #expect(lines[0].contains("  GET api.test/repos/{owner}/{repo}/issues/{number}  "), "\(lines[0])")
        #expect(lines[1].contains("  GET other.test:8443/users/{id}/files/{id}/blob/{id}  "), "\(lines[1])")
        #expect(lines[2].contains("  CONNECT tunnel.test:443  "), "\(lines[2])")

        // With --file and no config: the automatic templates still apply.
        let bare = try await TraceReplayTests.gatewayCLI(["trace", "list", "--file", "\(dir)/traces/trace.jsonl"], environment: ["GATEWAY_CONFIG": ""])
        #expect(bare.status == 0, "\(bare.stderrString)")
        #expect(bare.stdoutString.contains("  GET api.test/repos/apple/swift-nio/issues/{id}  "), "\(bare.stdoutString)")
    }
}
