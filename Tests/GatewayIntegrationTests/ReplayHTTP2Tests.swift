import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Replay inside interception over HTTP/2 (issue 55): an intercepted HTTPS
/// client speaking HTTP/2 gets recorded entries, a JSON one and a streamed
/// one (SSE, `text/event-stream`), in the file's order, without the upstream.
@Suite(.timeLimit(.minutes(2)))
struct ReplayHTTP2Tests {
    @Test func anInterceptedHTTP2ClientGetsReplayedJSONAndSSE() async throws {
        let interception = InterceptionTests()
        let f = try await interception.fixture()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-replay-h2")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let har = "\(dir)/h2.har"
        let events = #"id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\n"#
        let document = """
            {"log":{"version":"1.2","creator":{"name":"test","version":"1"},"entries":[
             {"startedDateTime":"2026-11-30T09:00:00.000Z","time":5,
              "request":{"method":"GET","url":"\(f.url)/orders/1","httpVersion":"HTTP/2.0","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
              "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/2.0","headers":[{"name":"content-type","value":"application/json"}],"cookies":[],
               "content":{"size":8,"mimeType":"application/json","text":"{\\"id\\":1}"},"redirectURL":"","headersSize":-1,"bodySize":8},"cache":{},"timings":{"send":0,"wait":5,"receive":0}},
             {"startedDateTime":"2026-11-30T09:00:01.000Z","time":5,
              "request":{"method":"GET","url":"\(f.url)/events","httpVersion":"HTTP/2.0","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
              "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/2.0","headers":[{"name":"content-type","value":"text/event-stream"},{"name":"cache-control","value":"no-cache"}],"cookies":[],
               "content":{"size":40,"mimeType":"text/event-stream","text":"\(events)"},"redirectURL":"","headersSize":-1,"bodySize":40},"cache":{},"timings":{"send":0,"wait":5,"receive":0}}
            ]}}
            """
        try Data(document.utf8).write(to: URL(fileURLWithPath: har))
        let gateway = try await GatewayHarness.start { config in
            interception.configure(f)(&config)
            config.upstreams[0].replay = ReplayConfig(har: har, unmatched: .block)
        }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let json = try await gateway.curl(["--http2", "--cacert", f.caPath, "-D", "-", "-w", " %{http_version}", "\(f.url)/orders/1"])
        #expect(json.stdoutString.contains("\nHTTP/2 200"), "\(json.stdoutString) \(json.stderrString)")
        #expect(json.stdoutString.hasSuffix(#"{"id":1} 2"#), "\(json.stdoutString)")
        #expect(json.stdoutString.lowercased().contains("x-gateway-injected: replay"))

        let sse = try await gateway.curl(["--http2", "-N", "--cacert", f.caPath, "-H", "Accept: text/event-stream", "-D", "-", "\(f.url)/events"])
        #expect(sse.stdoutString.lowercased().contains("content-type: text/event-stream"), "\(sse.stdoutString)")
        #expect(sse.stdoutString.hasSuffix("id: 1\ndata: {\"n\":1}\n\nid: 2\ndata: {\"n\":2}\n\n"), "the events whole: \(sse.stdoutString)")
        let missing = try await gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/orders/2"])
        #expect(missing.stdoutString == "502", "unmatched: block")
        #expect(f.upstream.receivedRequests.isEmpty, "nothing reached the upstream")
    }
}
