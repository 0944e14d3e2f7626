import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Mocks and replay through the live gateway (issue 55): a host that does not
/// exist answered by mocks, an intercepted HTTPS client and an HTTP/2 client
/// getting mocks, and a browser-style HAR replayed with the upstream stopped.
/// Nothing mocked or replayed reaches the network.
@Suite(.timeLimit(.minutes(3)))
struct MockReplayTests {
    static let userRule = MockRule(
        endpoint: EndpointTemplate("GET /users/{id}")!,
        response: MockResponse(status: 200, body: .inline(#"{"id":"{{path.id}}","q":"{{query.q}}"}"#), template: true)
    )

    @Test func aHostNoServerHasIsMockedAndTheRestBlocked() async throws {
        let gateway = try await GatewayHarness.start { config in
            var upstream = UpstreamConfig(name: "future", hosts: [HostPattern("api.future.invalid")!])
            var third = MockRule(endpoint: EndpointTemplate("POST /orders")!, bodyContains: ["\"sku\":\"A1\""], nth: 2, response: MockResponse(status: 409, body: .inline("taken")))
            third.headers = [MockHeader("Content-Type", "json")]
            let created = MockRule(endpoint: EndpointTemplate("POST /orders")!, response: MockResponse(status: 201, body: .inline(#"{"sku":"{{body.sku}}"}"#), template: true))
            upstream.mocks = MocksConfig(unmatched: .block, rules: [Self.userRule, third, created])
            config.upstreams = [upstream]
        }
        defer { Task { try? await gateway.stop() } }

        let user = try await gateway.curl(["-D", "-", "http://api.future.invalid/users/42?q=hi"])
        #expect(user.stdoutString.hasSuffix(#"{"id":"42","q":"hi"}"#), "\(user.stdoutString) \(user.stderrString)")
        #expect(user.stdoutString.lowercased().contains("x-gateway-injected: mock"))

        var posts: [String] = []
        for _ in 0..<3 {
            posts.append(try await gateway.curl([
                "-H", "Content-Type: application/json", "--data-binary", #"{"sku":"A1"}"#, "-w", " %{http_code}", "http://api.future.invalid/orders",
            ]).stdoutString)
        }
        #expect(posts == [#"{"sku":"A1"} 201"#, "taken 409", #"{"sku":"A1"} 201"#], "body matched, the second call only, the body echoed")

        let blocked = try await gateway.curl(["-D", "-", "http://api.future.invalid/nothing"])
        #expect(blocked.stdoutString.hasPrefix("HTTP/1.1 502"), "\(blocked.stdoutString)")
        #expect(blocked.stdoutString.lowercased().contains("x-gateway-error: not_mocked"))
        #expect(blocked.stdoutString.contains("\"not_mocked\""), "a JSON body with the code")

        let metrics = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(metrics.contains("gateway_mocked_responses_total{upstream=\"future\""), "\(metrics)")
        #expect(!metrics.split(separator: "\n").contains { $0.hasPrefix("gateway_upstream_attempts_total{") }, "no attempt reached the network")
    }

    /// A body held for the rules to match on is bounded (1 MiB): a larger one
    /// is refused whole with 413, never passed on cut at the bound.
    @Test func aBodyPastTheHoldLimitIsRefusedNotCutShort() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            var api = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            api.mocks = MocksConfig(rules: [MockRule(endpoint: EndpointTemplate("POST /echo")!, bodyContains: ["never"], response: MockResponse(status: 201, body: .inline("mocked")))])
            config.upstreams = [api]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let small = try await gateway.curl(["--data-binary", "a small body", "-o", "/dev/null", "-w", "%{http_code}", upstream.url("/echo")])
        #expect(small.stdoutString == "200", "unmatched: pass, the whole body upstream")
        let large = try await gateway.curl(
            ["-H", "Content-Type: application/octet-stream", "--data-binary", "@-", "-D", "-", "-o", "/dev/null", upstream.url("/echo")],
            stdin: Array(repeating: UInt8(ascii: "x"), count: 2 << 20)
        )
        #expect(large.stdoutString.contains("HTTP/1.1 413"), "\(large.stdoutString)")
        #expect(large.stdoutString.lowercased().contains("x-gateway-error: body_too_large"))
        #expect(upstream.receivedRequests.allSatisfy { $0.body.count < 1 << 20 }, "no body cut at 1 MiB reached the upstream")
    }

    @Test func interceptedHTTPSAndHTTP2ClientsGetMocks() async throws {
        let interception = InterceptionTests()
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start { config in
            interception.configure(f)(&config)
            config.upstreams[0].mocks = MocksConfig(rules: [Self.userRule])
        }
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let h1 = try await gateway.curl(["--http1.1", "--cacert", f.caPath, "-w", " %{http_version}", "\(f.url)/users/7?q=one"])
        #expect(h1.stdoutString == #"{"id":"7","q":"one"} 1.1"#, "\(h1.stdoutString) \(h1.stderrString)")
        let h2 = try await gateway.curl(["--http2", "--cacert", f.caPath, "-D", "-", "-w", " %{http_version}", "\(f.url)/users/8?q=two"])
        #expect(h2.stdoutString.hasSuffix(#"{"id":"8","q":"two"} 2"#), "\(h2.stdoutString) \(h2.stderrString)")
        #expect(h2.stdoutString.lowercased().contains("x-gateway-injected: mock"))
        #expect(f.upstream.receivedRequests.isEmpty, "mocked requests never reached the upstream")

        let passed = try await gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_code}", "\(f.url)/echo"])
        #expect(passed.stdoutString == "200", "unmatched: pass")
        #expect(f.upstream.receivedRequests.map(\.target) == ["/echo"])
    }

    @Test func aBrowserHARReplaysOfflineWithTheUpstreamStopped() async throws {
        let upstream = try await TestUpstream.start()
        let base = upstream.baseURL
        try await upstream.shutdown()
        let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gateway-replay")
        let har = "\(dir)/yesterday.har"
        // As Chromium's DevTools exports it: pseudo-headers, a gzip coding whose text is decoded, base64 content, timings.
        let document = """
            {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"pages":[],"entries":[
             {"_resourceType":"fetch","startedDateTime":"2026-11-30T09:00:00.000Z","time":40.2,
              "request":{"method":"GET","url":"\(base)/orders?page=1","httpVersion":"HTTP/1.1","headers":[{"name":"Accept","value":"application/json"}],"queryString":[{"name":"page","value":"1"}],"cookies":[],"headersSize":-1,"bodySize":0},
              "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"},{"name":"Content-Encoding","value":"gzip"},{"name":"Content-Length","value":"31"}],"cookies":[],
               "content":{"size":14,"mimeType":"application/json","compression":17,"text":"[{\\"id\\":1}]"},"redirectURL":"","headersSize":-1,"bodySize":31,"_transferSize":120},
              "cache":{},"timings":{"blocked":1,"dns":-1,"ssl":-1,"connect":-1,"send":0.1,"wait":38,"receive":1.1}},
             {"_resourceType":"fetch","startedDateTime":"2026-11-30T09:00:01.000Z","time":20,
              "request":{"method":"GET","url":"\(base)/orders?page=1","httpVersion":"HTTP/1.1","headers":[],"queryString":[{"name":"page","value":"1"}],"cookies":[],"headersSize":-1,"bodySize":0},
              "response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[{"name":"Content-Type","value":"application/json"}],"cookies":[],
               "content":{"size":10,"mimeType":"application/json","text":"W3siaWQiOjJ9XQ==","encoding":"base64"},"redirectURL":"","headersSize":-1,"bodySize":10},
              "cache":{},"timings":{"send":0,"wait":19,"receive":1}},
             {"startedDateTime":"2026-11-30T09:00:02.000Z","time":15,
              "request":{"method":"POST","url":"\(base)/orders","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":9,"postData":{"mimeType":"application/json","text":"{\\"sku\\":1}"}},
              "response":{"status":201,"statusText":"Created","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":7,"mimeType":"text/plain","text":"created"},"redirectURL":"","headersSize":-1,"bodySize":7},
              "cache":{},"timings":{"send":0,"wait":14,"receive":1}}
            ]}}
            """
        try Data(document.utf8).write(to: URL(fileURLWithPath: har))
        let gateway = try await GatewayHarness.start { config in
            var api = UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])
            api.replay = ReplayConfig(har: har, match: [.method, .path, .query, .body], unmatched: .block)
            config.upstreams = [api]
        }
        defer { Task { try? await gateway.stop() } }

        let first = try await gateway.curl(["-w", " %{http_code}", "\(base)/orders?page=1"])
        let second = try await gateway.curl(["-D", "-", "\(base)/orders?page=1"])
        #expect(first.stdoutString == #"[{"id":1}] 200"#, "\(first.stdoutString) \(first.stderrString)")
        #expect(second.stdoutString.hasSuffix(#"[{"id":2}]"#), "in order: \(second.stdoutString)")
        #expect(second.stdoutString.lowercased().contains("x-gateway-injected: replay"))
        let posted = try await gateway.curl(["--data-binary", #"{"sku":1}"#, "-w", " %{http_code}", "\(base)/orders"])
        #expect(posted.stdoutString == "created 201")
        let other = try await gateway.curl(["--data-binary", #"{"sku":2}"#, "-o", "/dev/null", "-w", "%{http_code}", "\(base)/orders"])
        #expect(other.stdoutString == "502", "another body is not the recorded request, and unmatched: block")
        #expect(gateway.logs.text.contains("injected=replay"))
    }
}
