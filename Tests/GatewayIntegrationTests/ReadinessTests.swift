import Foundation
import GatewayConfig
import GatewayTesting
import Testing

/// Readiness that tells the truth: the admin port's `/readyz` asks the proxy
/// port itself (a connection and a `GET /readyz` it answers), so it fails
/// when the proxy stops accepting or answering while the admin is up, as the
/// image's HEALTHCHECK must (a root-only socket option once reset every
/// proxied connection while `/healthz` said 200).
@Suite(.timeLimit(.minutes(1)))
struct ReadinessTests {
    func readyz(_ gateway: GatewayHarness) async throws -> (status: String, body: String) {
        let result = try await ProcessRunner.run("curl", ["-sS", "--max-time", "5", "-w", "\n%{http_code}", "\(gateway.adminURL)/readyz"])
        let text = result.stdoutString
        let split = text.lastIndex(of: "\n").map { (String(text[text.index(after: $0)...]), String(text[..<$0])) }
        return (split?.0 ?? "", split?.1 ?? text)
    }

    /// The proxy port answers a probe itself, before proxy authentication,
    /// and the probe is not an exchange (no log line, no request metric).
    @Test func theProxyPortAnswersItsOwnProbeBeforeProxyAuthentication() async throws {
        let gateway = try await GatewayHarness.start { config in
            config.proxyAuth = ProxyAuthConfig(realm: "gateway", users: [
                ProxyUser(username: "u", password: Secret(source: .env("GATEWAY_TEST_PROXY_PASSWORD"), value: "p-ready")),
            ])
        }
        defer { Task { try? await gateway.stop() } }
        let probe = try await ProcessRunner.run("curl", ["-sS", "-w", "\n%{http_code}", "\(gateway.proxyURL)/readyz"])
        #expect(probe.stdoutString == "{\"status\":\"ready\"}\n\n200", "\(probe.stdoutString)")
        // Anything else in origin form is still refused, and a proxied request still needs credentials.
        let other = try await ProcessRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "\(gateway.proxyURL)/readyz/x"])
        #expect(other.stdoutString == "407" || other.stdoutString == "400", "\(other.stdoutString)")

        let ready = try await readyz(gateway)
        #expect(ready.status == "200" && ready.body.contains("\"status\":\"ready\""), "\(ready)")
        let metrics = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"]).stdoutString
        #expect(!metrics.contains("endpoint=\"/readyz\""), "a probe is not an exchange")
    }

    /// The proxy stops accepting (graceful shutdown: it drains an exchange
    /// in flight while the admin port still answers): `/readyz` says 503 and
    /// why, well within 10 s.
    @Test func readinessFailsOnceTheProxyPortStopsAccepting() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.limits.drainTimeout = .seconds(8)
            config.limits.bodyTimeout = .seconds(30)
        }
        defer { Task { try? await upstream.shutdown() } }
        #expect(try await readyz(gateway).status == "200")

        // An exchange in flight keeps the drain going while the proxy listener is closed.
        let busy = try await gateway.rawConnection()
        try await busy.send("POST \(upstream.url("/echo")) HTTP/1.1\r\nHost: 127.0.0.1:\(upstream.port)\r\nContent-Length: 100\r\n\r\n0123")
        try await Task.sleep(for: .milliseconds(200))
        let stopping = Task { try await gateway.stop() }

        let started = ContinuousClock.now
        var last: (status: String, body: String) = ("", "")
        while ContinuousClock.now - started < .seconds(10) {
            last = try await readyz(gateway)
            if last.status == "503" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(last.status == "503", "\(last)")
        #expect(last.body.contains("\"status\":\"not_ready\"") && last.body.contains("\"proxy\":\"not_answering\""), "\(last.body)")
        #expect(ContinuousClock.now - started < .seconds(10))
        _ = try? await stopping.value
    }
}
