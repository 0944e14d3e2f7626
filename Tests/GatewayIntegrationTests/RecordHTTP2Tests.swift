import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// `record:` over HTTP/2 inside interception (issue 55): an intercepted client
/// speaking h2 gets its JSON and its SSE stream from the upstream, both land in
/// the HAR whole (the events as sent), and a gateway replaying that file gives
/// the same stream to an h2 client with the upstream stopped.
@Suite(.timeLimit(.minutes(2)))
struct RecordHTTP2Tests {
    static let events = "id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\n"

    @Test func anInterceptedHTTP2ClientsJSONAndSSEAreRecordedAndReplayed() async throws {
        let interception = InterceptionTests()
        let f = try await interception.fixture()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-record-h2")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let har = "\(dir)/h2.har"
        f.upstream.setResponder { request in
            request.path.hasSuffix("/events")
                ? TestResponse(headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")], body: Array(Self.events.utf8))
                : TestResponse(headers: [("Content-Type", "application/json")], body: Array(#"{"id":1}"#.utf8))
        }
        let recorder = try await GatewayHarness.start { config in
            interception.configure(f)(&config)
            config.upstreams[0].record = RecordConfig(har: har)
        }
        let json = try await recorder.curl(["--http2", "--cacert", f.caPath, "-w", " %{http_version}", "\(f.url)/custom/orders/1"])
        #expect(json.stdoutString == #"{"id":1} 2"#, "\(json.stdoutString) \(json.stderrString)")
        let sse = try await recorder.curl(["--http2", "-N", "--cacert", f.caPath, "\(f.url)/custom/events"])
        #expect(sse.stdoutString == Self.events, "\(sse.stdoutString) \(sse.stderrString)")
        try await recorder.stop()

        let check = """
            import json, sys
            from haralyzer import HarParser
            with open(sys.argv[1]) as f:
                entries = HarParser(json.load(f)).har_data["entries"]
            print(json.dumps([[e["request"]["url"], e["response"]["content"].get("mimeType", ""), e["response"]["content"].get("text", "")] for e in entries]))
            """
        let parsed = try await ProcessRunner.run("python3", ["-c", check, har], timeout: .seconds(60))
        #expect(parsed.status == 0, "\(parsed.stderrString)")
        let rows = try JSONSerialization.jsonObject(with: Data(parsed.stdout)) as? [[String]] ?? []
        #expect(rows.map { $0[0] } == ["\(f.url)/custom/orders/1", "\(f.url)/custom/events"], "\(parsed.stdoutString)")
        #expect(rows.last?[1].hasPrefix("text/event-stream") == true, "\(parsed.stdoutString)")
        #expect(rows.last?[2] == Self.events, "the events whole: \(parsed.stdoutString)")

        try await f.upstream.shutdown()
        let replayer = try await GatewayHarness.start { config in
            interception.configure(f)(&config)
            config.upstreams[0].replay = ReplayConfig(har: har, unmatched: .block)
        }
        defer { Task { try? await replayer.stop() } }
        let replayed = try await replayer.curl(["--http2", "-N", "--cacert", f.caPath, "-D", "-", "\(f.url)/custom/events"])
        #expect(replayed.stdoutString.contains("HTTP/2 200"), "\(replayed.stdoutString) \(replayed.stderrString)")
        #expect(replayed.stdoutString.hasSuffix(Self.events), "\(replayed.stdoutString)")
    }
}
