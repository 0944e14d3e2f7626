import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

@Suite("Debug traces: curl round-trip, replay, redaction", .timeLimit(.minutes(5)))
struct TraceTests {
    static func tempDir() throws -> String {
        let dir = TestScratch.path("gateway-trace")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Every corpus case: the `--direct` curl line run with `sh -c` reaches the
    /// echo upstream exactly as the original request.
    @Test func corpusRoundTripsThroughShell() async throws {
        #expect(TraceCorpusCase.all.count >= 30)
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let forms = TraceCurlForms(config: GatewayConfig())
        for (index, corpusCase) in TraceCorpusCase.all.enumerated() {
            let request = corpusCase.request(port: upstream.port)
            let path = "\(dir)/\(index).bin"
            let body = TraceCurlForms.body(corpusCase.body, length: corpusCase.body.count) {
                _ = FileManager.default.createFile(atPath: path, contents: Data(corpusCase.body))
                return path
            }
            let line = forms.direct(request, body: body, bodyLength: corpusCase.body.count).line
            let before = upstream.receivedRequests.count
            let result = try await ProcessRunner.run("sh", ["-c", line + " -sS -o /dev/null"], environment: ["NO_PROXY": "*", "no_proxy": "*", "http_proxy": "", "HTTP_PROXY": ""])
            #expect(result.status == 0, "\(corpusCase): \(result.stderrString)\n\(line)")
            let received = upstream.receivedRequests
            guard received.count == before + 1, let seen = received.last else {
                Issue.record("\(corpusCase): upstream saw \(received.count - before) requests\n\(line)")
                continue
            }
            #expect(seen.method == request.method.rawValue, "\(corpusCase)")
            #expect(seen.target == request.target, "\(corpusCase)\n\(line)")
            let expected = request.headers.map { [$0.name, $0.value] }
            #expect(seen.headers == expected, "\(corpusCase)\n\(line)")
            if request.method != .HEAD {
                #expect(seen.body == corpusCase.body, "\(corpusCase): body \(seen.body.count) vs \(corpusCase.body.count) bytes\n\(line.prefix(300))")
            }
        }
    }

    static func readRecords(_ file: String, count: Int) async throws -> [TraceRecord] {
        for _ in 0..<100 {
            if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                let lines = text.split(separator: "\n")
                if lines.count >= count { return try lines.map { try TraceRecord.decode(line: $0) } }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("trace file \(file) has fewer than \(count) records")
        return []
    }

    /// `debug: true`: a record per exchange in the trace file, secrets redacted
    /// there and in the log; the through-gateway curl line replays the request.
    @Test func tracesRedactAndReplayThroughGateway() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = "s3cr3t-upstream-token-123"
        let clientSecret = "client-bearer-xyz-789"
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            // An explicit http:// origin: the credential goes over plain http to the loopback test upstream.
            config.upstreams = [UpstreamConfig(name: "echo", hosts: [HostPattern("127.0.0.1")!], origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port), auth: AuthConfig(kind: .bearer(token: Secret(source: .env("ECHO_TOKEN"), value: secret))))]
        }
        let body = #"{"user":"me","password":"hunter2-pass","note":"it's $HOME"}"#
        let result = try await gateway.curl([
            "-H", "Authorization: Bearer \(clientSecret)", "-H", "X-Dup: 1", "-H", "X-Dup: 2",
            "-H", "Content-Type: application/json", "--data-binary", body,
            upstream.url("/echo/x?token=\(clientSecret)&a=%20b"),
        ])
        #expect(result.status == 0)
        let records = try await Self.readRecords("\(dir)/trace.jsonl", count: 1)
        let record = try #require(records.first)
        #expect(record.status == 200)
        #expect(record.method == "POST")
        #expect(record.attempts.count == 1)
        #expect(record.upstream == "echo")
        #expect(record.responseBytes == result.stdout.count, "bytes to the client are counted, however the body was written")
        #expect(record.curlDirect.contains(#""Authorization: Bearer ${ECHO_TOKEN}""#), "\(record.curlDirect)")
        let fileText = try String(contentsOfFile: "\(dir)/trace.jsonl", encoding: .utf8)
        for leaked in [secret, clientSecret, "hunter2-pass"] {
            #expect(!fileText.contains(leaked))
            #expect(!gateway.logs.text.contains(leaked))
        }
        #expect(gateway.logs.text.contains("trace \(record.id): curl -x"))
        let binary = GatewayProcess.executableURL.path
        if FileManager.default.fileExists(atPath: binary) {
            let show = try await ProcessRunner.run(binary, ["trace", "show", record.id, "--file", "\(dir)/trace.jsonl"])
            #expect(show.status == 0)
            #expect(show.stdoutString.contains(record.id))
            for leaked in [secret, clientSecret, "hunter2-pass"] { #expect(!show.stdoutString.contains(leaked)) }
        }

        // Replay the through-gateway line with sh: `-x` is the bound port, not the configured 0.
        let before = upstream.receivedRequests.count
        let original = try #require(upstream.receivedRequests.last)
        let line = record.curl
        #expect(line.hasPrefix("curl -x '\(gateway.proxyURL)' "), "\(line)")
        let replay = try await ProcessRunner.run("sh", ["-c", line + " -sS -o /dev/null"], environment: [
            "REDACTED_AUTHORIZATION": "Bearer other", "REDACTED_TOKEN": "t", "NO_PROXY": "", "no_proxy": "",
        ])
        #expect(replay.status == 0, "\(replay.stderrString)\n\(line)")
        let seen = try #require(upstream.receivedRequests.last)
        #expect(upstream.receivedRequests.count == before + 1)
        #expect(seen.method == original.method)
        #expect(seen.target == "/echo/x?token=t&a=%20b")
        #expect(seen.headerValues("X-Dup") == ["1", "2"])
        #expect(seen.header("Authorization") == "Bearer \(secret)")
        let replayedBody = try JSONSerialization.jsonObject(with: Data(seen.body)) as? [String: String]
        #expect(replayedBody?["note"] == "it's $HOME")
        #expect(replayedBody?["password"] == TraceRedactor.bodyPlaceholder)
        try await gateway.stop()
    }

    /// An upstream with `origin`: the through-gateway line keeps the URL the client
    /// used (so replaying it matches the upstream again and gets its credential);
    /// the direct line has the origin's.
    @Test func throughGatewayLineKeepsTheClientsURLForAnOriginUpstream() async throws {
        let upstream = try await TestUpstream.start()
        defer { Task { try? await upstream.shutdown() } }
        let dir = try Self.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let secret = "origin-upstream-token-42"
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port),
                auth: AuthConfig(kind: .bearer(token: Secret(source: .env("API_TOKEN"), value: secret)))
            )]
        }
        defer { Task { try? await gateway.stop() } }
        let result = try await gateway.curl(["-o", "/dev/null", "http://api.test/echo/o?x=1"])
        #expect(result.status == 0, "\(result.stderrString)")
        let record = try #require(try await Self.readRecords("\(dir)/trace.jsonl", count: 1).first)
        #expect(record.curl.contains("'http://api.test/echo/o?x=1'"), "\(record.curl)")
        #expect(record.curlDirect.contains("'http://127.0.0.1:\(upstream.port)/echo/o?x=1'"), "\(record.curlDirect)")
        // The record names what the client asked for, and the upstream it matched.
        #expect(record.endpoint == "api.test/echo/o", "\(record.endpoint)")
        #expect(!record.curl.contains("Host: 127.0.0.1"), "\(record.curl)")
        #expect(record.upstream == "api")

        let replay = try await ProcessRunner.run("sh", ["-c", record.curl + " -sS -o /dev/null"], environment: ["NO_PROXY": "", "no_proxy": ""])
        #expect(replay.status == 0, "\(replay.stderrString)")
        #expect(upstream.receivedRequests.count == 2)
        #expect(upstream.receivedRequests.last?.header("Authorization") == "Bearer \(secret)", "the replay matched the upstream again")
    }
}
