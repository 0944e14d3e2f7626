import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// `gateway trace replay|list|show`, the bound `-x` address, `--debug` across
/// SIGHUP: the real binary against a live gateway and the echo upstream.
@Suite("Debug traces: replay, rotated files, --debug reload", .timeLimit(.minutes(5)))
struct TraceReplayTests {
    static var binary: String { GatewayProcess.executableURL.path }

    static func gatewayCLI(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await ProcessRunner.run(binary, arguments, environment: environment, timeout: .seconds(60))
    }

    /// A trace file holding `records`.
    static func writeTrace(_ path: String, _ records: [TraceRecord]) throws {
        try Data(records.flatMap { $0.jsonLine() }).write(to: URL(fileURLWithPath: path))
    }

    static func record(_ id: String, curl: String = "curl 'http://127.0.0.1:1/'") -> TraceRecord {
        TraceRecord(id: id, time: "2025-01-01T00:00:00.000Z", client: "127.0.0.1", upstream: nil, method: "GET", endpoint: "h/\(id)",
                    attempts: [], status: 200, error: nil, requestBytes: 0, responseBytes: 0, duration: 0.01, curl: curl, curlDirect: curl)
    }

    /// Redacted client values and redacted body fields are explained once, as
    /// notes, not as one warning per variable.
    @Test func redactedValuesAreNotedNotWarned() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        let line = #"curl -x 'http://127.0.0.1:1' -H "Authorization: ${REDACTED_AUTHORIZATION}" -H "Cookie: ${REDACTED_COOKIE}" --data-binary '{"password":"[REDACTED]"}' 'http://127.0.0.1:1/x'"#
        try Self.writeTrace(file, [Self.record("r", curl: line)])
        let replay = try await Self.gatewayCLI(["trace", "replay", "r", "--file", file])
        let stderr = replay.stderrString
        #expect(stderr.contains("note: the client's redacted values $REDACTED_AUTHORIZATION, $REDACTED_COOKIE are sent empty unless exported (the gateway still puts the upstream's configured credential in its place)"), "\(stderr)")
        #expect(stderr.contains("note: the recorded body has redacted fields"), "\(stderr)")
        #expect(!stderr.contains("is not set"), "\(stderr)")
    }

    /// Through the gateway with a large binary body (saved as `@file`): the
    /// replay reaches the upstream with the same body, is traced again, and
    /// the table compares it with the original. `--direct` takes the
    /// credential from the exported env var and says when it is unset.
    @Test func replayThroughTheGatewayAndDirect() async throws {
        #expect(FileManager.default.fileExists(atPath: Self.binary))
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        let secret = "replay-secret-4711"
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: file)
            // An explicit http:// origin: the credential goes over plain http to the loopback test upstream.
            config.upstreams = [UpstreamConfig(name: "echo", hosts: [HostPattern("127.0.0.1")!], origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port), auth: AuthConfig(kind: .bearer(token: Secret(source: .env("ECHO_TOKEN"), value: secret))))]
        }
        let body = TestUpstream.pattern(count: 100 * 1024)
        try Data(body).write(to: URL(fileURLWithPath: "\(dir)/upload.bin"))
        let sent = try await gateway.curl(["-o", "/dev/null", "--data-binary", "@\(dir)/upload.bin", "-H", "Content-Type: application/octet-stream", upstream.url("/echo/replay")])
        #expect(sent.status == 0, "\(sent.stderrString)")
        let record = try #require(try await TraceTests.readRecords(file, count: 1).first)

        // -x is the bound port, the body an absolute @file.
        #expect(record.curl.hasPrefix("curl -x '\(gateway.proxyURL)' "), "\(record.curl)")
        let bodyFile = "\(dir)/bodies/\(record.id).bin"
        #expect(record.curl.contains("--data-binary '@\(bodyFile)'"), "\(record.curl)")
        #expect(FileManager.default.contents(atPath: bodyFile) == Data(body))

        let before = upstream.receivedRequests.count
        let replay = try await Self.gatewayCLI(["trace", "replay", record.id, "--file", file])
        #expect(replay.status == 0, "\(replay.stderrString)\n\(replay.stdoutString)")
        let received = upstream.receivedRequests
        #expect(received.count == before + 1)
        #expect(received.last?.method == "POST")
        #expect(received.last?.body == body)
        #expect(received.last?.header("Authorization") == "Bearer \(secret)")
        let lines = replay.stdoutString.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(lines.first == ["original", "replay"], "\(replay.stdoutString)")
        #expect(lines.contains(["status", "200", "200"]), "\(replay.stdoutString)")
        #expect(lines.contains(["attempts", "1", "-"]), "\(replay.stdoutString)")
        #expect(lines.contains { $0.first == "total" && $0.count == 5 }, "\(replay.stdoutString)")
        // The replay went through the gateway: it was traced too.
        #expect(try await TraceTests.readRecords(file, count: 2).count == 2)

        let beforeUnset = upstream.receivedRequests.count
        let unset = try await Self.gatewayCLI(["trace", "replay", record.id, "--file", file, "--direct"], environment: ["ECHO_TOKEN": ""])
        #expect(unset.status == 1, "refused, not replayed with an empty token: \(unset.stderrString)")
        #expect(unset.stderrString.contains("$ECHO_TOKEN is not set"), "\(unset.stderrString)")
        #expect(upstream.receivedRequests.count == beforeUnset, "nothing was sent")
        let direct = try await Self.gatewayCLI(["trace", "replay", record.id, "--file", file, "--direct"], environment: ["ECHO_TOKEN": "from-env", "http_proxy": "http://127.0.0.1:1"])
        #expect(direct.status == 0, "\(direct.stderrString)")
        #expect(!direct.stderrString.contains("not set"))
        #expect(upstream.receivedRequests.last?.header("Authorization") == "Bearer from-env")
        #expect(upstream.receivedRequests.last?.body == body)
        #expect(direct.stdoutString.contains("replay (direct)"))
        try await gateway.stop()
    }

    /// Issue 52: `--direct` with a credential's variable unset warned, sent an
    /// empty token, got 401 and exited 0. It refuses: exit 1, the unset
    /// variable named (never a value), nothing sent.
    @Test func directReplayRefusesWithACredentialVariableUnset() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        let direct = #"curl -H "Authorization: Bearer ${REPLAY_SET_TOKEN}" -H "X-Api-Key: ${REPLAY_UNSET_KEY}" 'http://127.0.0.1:\#(upstream.port)/echo/direct'"#
        var record = Self.record("direct", curl: "curl -x 'http://127.0.0.1:1' 'http://127.0.0.1:\(upstream.port)/echo/direct'")
        record.curlDirect = direct
        try Self.writeTrace(file, [record])
        let setValue = "set-value-5150"

        let refused = try await Self.gatewayCLI(["trace", "replay", "direct", "--file", file, "--direct"], environment: ["REPLAY_SET_TOKEN": setValue, "REPLAY_UNSET_KEY": ""])
        #expect(refused.status == 1, "\(refused.stderrString)\n\(refused.stdoutString)")
        #expect(refused.stderrString.contains("$REPLAY_UNSET_KEY is not set"), "\(refused.stderrString)")
        #expect(refused.stderrString.contains("export REPLAY_UNSET_KEY=..."), "\(refused.stderrString)")
        #expect(!refused.stderrString.contains("REPLAY_SET_TOKEN"), "only the unset one is named: \(refused.stderrString)")
        #expect(!refused.stderrString.contains(setValue) && !refused.stdoutString.contains(setValue), "never a value")
        #expect(!refused.stderrString.contains("Usage:"), "\(refused.stderrString)")
        #expect(upstream.receivedRequests.isEmpty, "nothing was sent")

        // Both set: it runs.
        let sent = try await Self.gatewayCLI(["trace", "replay", "direct", "--file", file, "--direct"], environment: ["REPLAY_SET_TOKEN": setValue, "REPLAY_UNSET_KEY": "k"])
        #expect(sent.status == 0, "\(sent.stderrString)")
        #expect(upstream.receivedRequests.last?.header("X-Api-Key") == "k")
    }

    /// curl failing (nothing listens) makes replay exit non-zero; a body file
    /// deleted by retention is reported before anything is sent.
    @Test func replayFailsWhenCurlFailsOrTheBodyFileIsGone() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        try Self.writeTrace(file, [
            Self.record("refused", curl: "curl -x 'http://127.0.0.1:1' --http1.1 'http://127.0.0.1:1/x'"),
            Self.record("gone", curl: "curl -x 'http://127.0.0.1:1' --http1.1 --data-binary '@\(dir)/bodies/gone.bin' 'http://127.0.0.1:1/x'"),
        ])
        let refused = try await Self.gatewayCLI(["trace", "replay", "refused", "--file", file])
        #expect(refused.status != 0)
        #expect(refused.stderrString.contains("curl failed"), "\(refused.stderrString)")
        #expect(refused.stdoutString.contains("failed"), "\(refused.stdoutString)")
        let gone = try await Self.gatewayCLI(["trace", "replay", "gone", "--file", file])
        #expect(gone.status != 0)
        #expect(gone.stderrString.contains("no longer exists"), "\(gone.stderrString)")
        // Failures at run time are not usage mistakes: exit 1, no usage text.
        #expect(gone.status == 1)
        #expect(!gone.stderrString.contains("Usage:"), "\(gone.stderrString)")
        let missing = try await Self.gatewayCLI(["trace", "replay", "nope", "--file", file])
        #expect(missing.status == 1)
        #expect(missing.stderrString.contains("no trace record with id nope"), "\(missing.stderrString)")
        #expect(!missing.stderrString.contains("Usage:"), "\(missing.stderrString)")
    }

    /// `list`, `show` and `curl` read every rotated file, oldest first.
    @Test func listShowAndCurlReadEveryRotatedFile() async throws {
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(dir)/trace.jsonl"
        for (suffix, id) in [(".3", "oldest"), (".2", "older"), (".1", "newer"), ("", "newest")] {
            try Self.writeTrace(file + suffix, [Self.record(id, curl: "curl 'http://example.test/\(id)'")])
        }
        let list = try await Self.gatewayCLI(["trace", "list", "--file", file])
        #expect(list.status == 0, "\(list.stderrString)")
        let ids = list.stdoutString.split(separator: "\n").map { String($0.prefix { $0 != " " }) }
        #expect(ids == ["oldest", "older", "newer", "newest"])
        let show = try await Self.gatewayCLI(["trace", "show", "oldest", "--file", file])
        #expect(show.status == 0)
        #expect(show.stdoutString.contains("\"endpoint\":\"h/oldest\""))
        let curl = try await Self.gatewayCLI(["trace", "curl", "older", "--file", file])
        #expect(curl.stdoutString == "curl 'http://example.test/older'\n")
    }
}
