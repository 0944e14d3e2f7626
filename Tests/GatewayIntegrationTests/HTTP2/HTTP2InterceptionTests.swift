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
}
