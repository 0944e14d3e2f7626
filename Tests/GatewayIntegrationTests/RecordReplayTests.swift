import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Synchronization
import Testing

/// `record:` (issue 55): exchanges recorded through the gateway to a HAR 1.2
/// file (bodies whole, secrets redacted as traces redact them, written
/// atomically and private), valid for a HAR reader (Python haralyzer), then
/// replayed by another gateway with the upstream stopped.
@Suite(.timeLimit(.minutes(3)))
struct RecordReplayTests {
    static let clientSecret = "client-bearer-0c7e51"
    static let password = "hunter2-8a1f"
    static let sessionCookie = "session=cookie-5d2b"

    @Test func recordedThroughTheGatewayThenReplayedOfflineWithTheUpstreamStopped() async throws {
        let upstream = try await TestUpstream.start()
        let calls = Atomic(0)
        upstream.setResponder { request in
            let call = calls.add(1, ordering: .relaxed).newValue
            if request.method == "POST" {
                return .text(#"{"created":true,"sku":"A1"}"#, status: 201, headers: [("Content-Type", "application/json")])
            }
            return .text(#"{"call":\#(call),"access_token":"upstream-token-77"}"#, headers: [("Content-Type", "application/json"), ("Set-Cookie", Self.sessionCookie)])
        }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let har = "\(dir)/recorded/api.har"
        let recorder = try await GatewayHarness.start { config in
            var api = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            api.record = RecordConfig(har: har)
            config.upstreams = [api]
        }
        let orders = upstream.url("/custom/orders?page=1")
        let auth = ["-H", "Authorization: Bearer \(Self.clientSecret)"]
        let first = try await recorder.curl(auth + [orders])
        let second = try await recorder.curl(auth + [orders])
        let created = try await recorder.curl(auth + ["-H", "Content-Type: application/json", "--data-binary", #"{"sku":"A1","password":"\#(Self.password)"}"#, upstream.url("/custom/orders")])
        try await recorder.stop()
        #expect(first.stdoutString.contains(#""call":1"#) && second.stdoutString.contains(#""call":2"#), "\(first.stdoutString) \(second.stdoutString)")
        #expect(created.stdoutString.contains(#""created":true"#))

        let text = try String(contentsOfFile: har, encoding: .utf8)
        for secret in [Self.clientSecret, Self.password, "upstream-token-77", "cookie-5d2b"] {
            #expect(!text.contains(secret), "the recording holds no secret (\(secret))")
        }
        let mode = try FileManager.default.attributesOfItem(atPath: har)[.posixPermissions] as? Int
        #expect(mode == 0o600, "private from its first byte: \(String(mode ?? 0, radix: 8))")

        // A HAR reader takes it: three entries with their methods, statuses and bodies.
        let check = """
            import json, sys
            from haralyzer import HarParser
            with open(sys.argv[1]) as f:
                parser = HarParser(json.load(f))
            entries = parser.har_data["entries"]
            print(json.dumps([[e["request"]["method"], e["response"]["status"], e["response"]["content"].get("text", "")] for e in entries]))
            """
        let parsed = try await ProcessRunner.run("python3", ["-c", check, har], timeout: .seconds(60))
        #expect(parsed.status == 0, "\(parsed.stderrString)")
        let rows = try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [[Any]] ?? []
        #expect(rows.map { $0[0] as? String } == ["GET", "GET", "POST"], "\(parsed.stdoutString)")
        #expect(rows.map { $0[1] as? Int } == [200, 200, 201])
        #expect((rows.first?[2] as? String)?.contains(#""access_token":"[REDACTED]""#) == true, "\(parsed.stdoutString)")

        try await upstream.shutdown()
        let replayer = try await GatewayHarness.start { config in
            var api = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            api.replay = ReplayConfig(har: har, unmatched: .block)
            config.upstreams = [api]
        }
        defer { Task { try? await replayer.stop() } }
        let replayedFirst = try await replayer.curl(["-D", "-", orders])
        let replayedSecond = try await replayer.curl([orders])
        let replayedPost = try await replayer.curl(["-w", " %{http_code}", "--data-binary", "{}", upstream.url("/custom/orders")])
        #expect(replayedFirst.stdoutString.contains(#""call":1"#), "\(replayedFirst.stdoutString) \(replayedFirst.stderrString)")
        #expect(replayedFirst.stdoutString.lowercased().contains("x-gateway-injected: replay"))
        #expect(replayedSecond.stdoutString.contains(#""call":2"#), "in the recorded order: \(replayedSecond.stdoutString)")
        #expect(replayedPost.stdoutString.hasSuffix(#"{"created":true,"sku":"A1"} 201"#), "\(replayedPost.stdoutString)")
    }
}

extension RecordReplayTests {
    /// `gateway record on|off` against a running gateway: a recording written
    /// with `enabled: false` records only while switched on.
    @Test func recordingIsSwitchedOnAndOffWithoutARestart() async throws {
        let upstream = try await TestUpstream.start()
        upstream.setResponder { request in .text("ok \(request.path)\n") }
        let dir = try TraceTests.tempDir()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let har = "\(dir)/session.har"
        let gateway = try await GatewayHarness.start { config in
            var api = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            api.record = RecordConfig(enabled: false, har: har)
            config.upstreams = [api]
        }
        func cli(_ arguments: [String]) async throws -> ProcessResult {
            try await ProcessRunner.run(GatewayProcess.executableURL.path, ["record"] + arguments + ["--admin", gateway.adminURL], timeout: .seconds(30))
        }
        _ = try await gateway.curl([upstream.url("/custom/before")])
        let on = try await cli(["on"])
        #expect(on.status == 0, "\(on.stderrString)")
        #expect(on.stdoutString == "upstream api: record on (switched on; the config has enabled: false)\n  \(har)\n", "\(on.stdoutString)")
        _ = try await gateway.curl([upstream.url("/custom/during")])
        let off = try await cli(["off", "--upstream", "api"])
        #expect(off.status == 0 && off.stdoutString.contains("record off (switched off"), "\(off.stdoutString) \(off.stderrString)")
        _ = try await gateway.curl([upstream.url("/custom/after")])
        try await gateway.stop()
        try await upstream.shutdown()

        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: har))) as? [String: Any]
        let entries = (document?["log"] as? [String: Any])?["entries"] as? [[String: Any]] ?? []
        let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(urls == [upstream.url("/custom/during")], "only the exchange made while switched on: \(urls)")
    }
}
