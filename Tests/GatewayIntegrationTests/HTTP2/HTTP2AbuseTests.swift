import Foundation
import GatewayTesting
import Testing

/// Bad input on the HTTP/2 side, from a hand-driven client (Python's `h2`):
/// a rapid-reset flood closes its own connection and nobody else's, and a
/// client's RST_STREAM cancels that stream's exchange only.
@Suite(.timeLimit(.minutes(3)))
struct HTTP2AbuseTests {
    let interception = InterceptionTests()

    struct RapidReset: Decodable {
        var sent: Int
        var goaway: Bool
        var error_code: Int?
        var closed: Bool
    }

    struct StreamResult: Decodable {
        var status: Int?
        var ended: Bool
    }

    @Test func rapidResetClosesThatConnectionAndOthersAreServed() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["COUNT"] = "10000"
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.rapidReset], environment: env, timeout: .seconds(60))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(RapidReset.self, from: Data(run.stdout))
        #expect(result.closed, "the flooding connection is closed: \(result)")
        #expect(result.goaway && result.error_code == 11, "GOAWAY ENHANCE_YOUR_CALM: \(result)")
        #expect(result.sent < 10000 || result.goaway, "\(result)")
        #expect(gateway.logs.text.contains("closed HTTP/2 connection: too many stream resets"), "\(gateway.logs.text)")

        // Everyone else is still served, over HTTP/2 and HTTP/1.1.
        let after = try await gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_version} %{response_code}", "\(f.url)/echo"])
        #expect(after.stdoutString == "2 200", "\(after.stderrString)")
        let h1 = try await gateway.curl(["--http1.1", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{http_version} %{response_code}", "\(f.url)/echo"])
        #expect(h1.stdoutString == "1.1 200", "\(h1.stderrString)")
        // The upstream saw few of the flood's requests: most streams were reset before they were routed.
        #expect(f.upstream.receivedRequests.count < 1000, "\(f.upstream.receivedRequests.count)")
    }

    @Test func aResetStreamCancelsItsExchangeOnly() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["PATH_TO_RESET"] = "/delay/5000"
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.resetThenRequest], environment: env, timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(StreamResult.self, from: Data(run.stdout))
        #expect(result.status == 200 && result.ended, "the next stream on the connection is served: \(result)")
        // The reset stream's exchange ended as cancelled (the client went away), well before the 5 s delay.
        let metrics = try await interception.metrics(gateway)
        #expect(metrics.contains("gateway_requests_total{upstream=\"api\",endpoint=\"/echo\",method=\"GET\",status_class=\"2xx\"} 1"), "\(metrics)")
    }

    struct BadStream: Decodable {
        var reset: Int?
        var status: Int?
        var ended: Bool
    }

    /// A stream that breaks the rules (its DATA exceed its content-length, or
    /// end short of it, on DATA or on the HEADERS) is reset with
    /// PROTOCOL_ERROR; no body of another length reaches the upstream, and the
    /// connection and its other streams go on.
    @Test(arguments: [("5", "0123456789"), ("10", "01234"), ("5", "")])
    func aBadStreamIsResetAndTheConnectionGoesOn(length: String, body: String) async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["LENGTH"] = length
        env["BODY"] = body
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.badStreamThenRequest], environment: env, timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(BadStream.self, from: Data(run.stdout))
        #expect(result.reset == 1, "stream 1 reset with PROTOCOL_ERROR: \(result)")
        #expect(result.status == 200 && result.ended, "stream 3 served on the same connection: \(result)\n\(gateway.logs.text)")
        #expect(!f.upstream.receivedRequests.contains { $0.target == "/echo" }, "\(f.upstream.receivedRequests.map(\.target))")
    }

    struct ControlByteResult: Decodable {
        var status: Int?
        var error: String?
        var after: Int?
    }

    /// A control byte in an HTTP/2 client's field value cannot be carried
    /// as HTTP/1.1: 400 `bad_request` for that stream (it was 500
    /// `internal_error`), nothing sent upstream, and the connection goes on.
    @Test func aFieldWithAControlByteIs400AndTheConnectionGoesOn() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.controlByteThenRequest], environment: f.h2ClientEnvironment(gateway), timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(ControlByteResult.self, from: Data(run.stdout))
        #expect(result.status == 400 && result.error == "bad_request", "\(result)")
        #expect(result.after == 200, "the next stream is served: \(result)")
        #expect(f.upstream.receivedRequests.allSatisfy { $0.target == "/echo?after=1" }, "\(f.upstream.receivedRequests.map(\.target))")
    }

    /// What RFC 9113 §8.2 calls malformed (checked by the gateway's own
    /// translation, NIOHTTP2's check being off): 400 `bad_request` for that
    /// stream, nothing sent upstream, and the connection goes on.
    @Test(arguments: [#"[["X-Upper", "1"]]"#, #"[["connection", "close"]]"#, #"[["te", "gzip"]]"#, #"[[":path", "/again"]]"#, #"[[":status", "200"]]"#])
    func aMalformedSectionIs400AndTheConnectionGoesOn(extraFields: String) async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await gateway.stop(); try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["EXTRA_FIELDS"] = extraFields
        let run = try await ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.extraFieldsThenRequest], environment: env, timeout: .seconds(30))
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(ControlByteResult.self, from: Data(run.stdout))
        #expect(result.status == 400 && result.error == "bad_request", "\(extraFields): \(result)")
        #expect(result.after == 200, "the next stream is served: \(result)")
        #expect(f.upstream.receivedRequests.allSatisfy { $0.target == "/echo?after=1" }, "\(f.upstream.receivedRequests.map(\.target))")
    }

    struct SlowResult: Decodable {
        var status: Int?
        var ended: Bool
        var goaway: Bool
        var last_stream: Int?
        var closed: Bool
        var after_goaway: [String]
    }

    /// A graceful shutdown sends GOAWAY naming the stream in flight, lets it
    /// finish (its HEADERS follow the GOAWAY), then closes the connection; curl
    /// on another connection gets its whole response.
    @Test func drainSendsGoAwayAndTheStreamInFlightFinishes() async throws {
        let f = try await interception.fixture()
        let gateway = try await GatewayHarness.start(interception.configure(f))
        defer { Task { try? await f.upstream.shutdown() } }

        var env = f.h2ClientEnvironment(gateway)
        env["PATH_SLOW"] = "/delay/1500"
        async let client = ProcessRunner.run("python3", ["-c", HTTP2ClientScripts.slowRequest], environment: env, timeout: .seconds(30))
        async let curl = gateway.curl(["--http2", "--cacert", f.caPath, "-o", "/dev/null", "-w", "%{size_download} %{http_version} %{response_code}", "\(f.url)/bytes/1000?chunk=100&delay_ms=150"])
        // Once both streams are under way upstream, the gateway drains.
        for _ in 0..<1000 where f.upstream.receivedRequests.count < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(f.upstream.receivedRequests.count == 2, "both streams reached the upstream before the drain")
        try await gateway.stop()
        let run = try await client
        #expect(run.status == 0, "\(run.stderrString)")
        let result = try JSONDecoder().decode(SlowResult.self, from: Data(run.stdout))
        #expect(result.goaway && result.last_stream == 1, "\(result)")
        #expect(!result.after_goaway.isEmpty, "the response came after the GOAWAY: \(result)")
        #expect(result.closed, "then the connection closed: \(result)")
        let finished = try await curl
        #expect(finished.stdoutString == "1000 2 200", "\(finished.stdoutString) \(finished.stderrString)\n\(gateway.logs.text)")
    }
}
