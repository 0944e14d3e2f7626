import Foundation
import GatewayApp
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// HTTP/2 inside interception, end to end with curl: ALPN picks `h2`, each
/// stream is an exchange with the upstream's credential, many streams share
/// one client connection, and trailers reach an HTTP/2 client.
@Suite(.timeLimit(.minutes(3)))
struct HTTP2InterceptionTests {
    let interception = InterceptionTests()

    @Test func curlNegotiatesHTTP2AndEachStreamIsAnExchange() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl([
            "--http2", "--cacert", f.caPath, "-w", "\n%{http_version} %{response_code}", "\(f.url)/echo?n=1",
        ])
        #expect(result.status == 0, "\(result.stderrString)\n\(gateway.logs.text)")
        let lines = result.stdoutString.split(separator: "\n")
        #expect(lines.last == "2 200", "\(result.stdoutString)")
        let echo = try JSONDecoder().decode(EchoReply.self, from: Data(lines.dropLast().joined(separator: "\n").utf8))
        #expect(echo.values("Authorization") == ["Bearer \(InterceptionTests.token.value)"], "auth injected on an HTTP/2 stream")
        #expect(echo.values("Via").first?.hasPrefix("2.0 ") == true, "\(echo.values("Via"))")
        #expect(f.upstream.receivedRequests.map(\.target) == ["/echo?n=1"])
    }

    @Test func fiftyParallelStreamsOnOneClientConnection() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let urls = (1...50).map { "\(f.url)/echo?n=\($0)" }
        let result = try await gateway.curl(
            ["--http2", "--parallel", "--parallel-max", "50", "--cacert", f.caPath,
             "-w", "%{http_version} %{response_code} %{num_connects}\n"] + urls.flatMap { ["-o", "/dev/null", $0] },
            timeout: .seconds(60)
        )
        #expect(result.status == 0, "\(result.stderrString)\n\(gateway.logs.text)")
        let lines = result.stdoutString.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(lines.count == 50)
        #expect(lines.allSatisfy { $0.count == 3 && $0[0] == "2" && $0[1] == "200" }, "\(result.stdoutString)")
        let connects = lines.compactMap { $0.count == 3 ? Int($0[2]) : nil }.reduce(0, +)
        #expect(connects == 1, "all 50 streams on one client connection: \(result.stdoutString)")
        #expect(Set(f.upstream.receivedRequests.map(\.target)) == Set(urls.map { String($0.dropFirst(f.url.count)) }))
    }

    @Test func postBodyAndGatewayErrorsTravelOnStreams() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        // A 1 MiB body, more than the stream's initial window: flow control both ways.
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        let post = try await gateway.curl(
            ["--http2", "--cacert", f.caPath, "--data-binary", "@-", "-o", "/dev/null", "-w", "%{http_version} %{response_code}", "\(f.url)/echo"],
            stdin: body
        )
        #expect(post.stdoutString == "2 200", "\(post.stderrString)\n\(gateway.logs.text)")
        #expect(f.upstream.receivedRequests.last?.body.count == body.count)

        // An upstream that is down: the gateway's own 502 on the stream, the connection fine.
        try await f.upstream.shutdown()
        let failed = try await gateway.curl(["--http2", "--cacert", f.caPath, "-D", "-", "-o", "/dev/null", "-w", "%{http_version} %{response_code}", "\(f.url)/down"])
        #expect(failed.stdoutString.hasSuffix("2 502"), "\(failed.stdoutString) \(failed.stderrString)")
        #expect(failed.stdoutString.lowercased().contains("x-gateway-error: connect_failed"), "\(failed.stdoutString)")
    }

    /// The protocol shows in the trace record, its curl line (which replays
    /// over HTTP/2), the HAR entry and the metrics.
    @Test func traceHARAndMetricsNameTheProtocol() async throws {
        let f = try await interception.fixture()
        let traceFile = "\(f.stateDir)/trace.jsonl"
        let gateway = try await GatewayHarness.start(interception.configure(f, trace: traceFile))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let result = try await gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_version}", "\(f.url)/echo?n=1"])
        #expect(result.stdoutString == "2", "\(result.stderrString)")
        let record = try #require(try await TraceTests.readRecords(traceFile, count: 1).first)
        #expect(record.httpVersion == "HTTP/2")
        #expect(record.curl.contains(" --http2"), "\(record.curl)")
        #expect(!record.curlDirect.contains("--http2"), "the upstream spoke HTTP/1.1: \(record.curlDirect)")
        let replay = try await ProcessRunner.run(
            "/bin/sh", ["-c", record.curl + " -sS -o /dev/null -w '%{http_version} %{http_code}'"],
            environment: ["NO_PROXY": "", "no_proxy": ""], timeout: .seconds(30)
        )
        #expect(replay.stdoutString == "2 200", "\(replay.stderrString)")

        let har = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/traces.har"])
        #expect(har.stdoutString.contains("\"HTTP/2.0\"") || har.stdoutString.contains("\"HTTP\\/2.0\""), "\(har.stdoutString.prefix(2000))")
        let metrics = try await interception.metrics(gateway)
        #expect(metrics.contains("gateway_requests_by_protocol_total{upstream=\"api\",client_protocol=\"h2\",upstream_protocol=\"http/1.1\"}"), "\(metrics)")
    }

    struct ResponseFrames: Decodable {
        var status: Int?
        var ended: Bool
        var frames: [[Int]]
    }

    /// A response's END_STREAM rides on its last DATA frame (or its trailers),
    /// as an origin sends it: no empty DATA frame after the body.
    @Test func theLastDataFrameEndsTheStream() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        for (path, length) in [("/bytes/1024", 1024), ("/bytes/300000", 300_000)] {
            var env = f.h2ClientEnvironment(gateway)
            env["PATH_GET"] = path
            let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.responseFrames], environment: env, timeout: .seconds(30))
            #expect(run.status == 0, "\(run.stderrString)")
            let result = try JSONDecoder().decode(ResponseFrames.self, from: Data(run.stdout))
            #expect(result.status == 200 && result.ended, "\(path): \(result)")
            #expect(result.frames.reduce(0) { $0 + $1[0] } == length, "\(path): \(result.frames)")
            #expect(result.frames.dropLast().allSatisfy { $0[1] == 0 }, "\(path): \(result.frames)")
            if path == "/bytes/1024" {
                // One upstream read gave the body and its end: one DATA frame carries both.
                #expect(result.frames == [[1024, 1]], "\(path): \(result.frames)")
            } else {
                #expect(result.frames.allSatisfy { $0[0] > 0 }, "no empty DATA frame: \(result.frames)")
            }
        }
    }
}
