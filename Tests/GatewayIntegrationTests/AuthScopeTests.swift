import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Through the live gateway: a credential goes to its origin only
/// (over TLS unless the upstream names an http:// origin), and never on TRACE.
@Suite(.timeLimit(.minutes(3)))
struct AuthScopeTests {
    static let token = Secret(source: .env("SCOPE_TOKEN"), value: "tok-Scope-Integration-1")

    /// The reproduction of the issue: an upstream without an `https://` origin,
    /// a client asking for plain http (and another port): no token in cleartext.
    @Test func plainHTTPWithoutAnExplicitHTTPOriginGetsNoCredential() async throws {
        let upstream = try await TestUpstream.start()
        let port = upstream.port
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("localhost")!], auth: AuthConfig(kind: .bearer(token: Self.token)))]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let echo = try await gateway.curl(["http://localhost:\(port)/echo"]).json(EchoReply.self)
        #expect(echo.values("Authorization").isEmpty, "forwarded, without the credential")
        #expect(upstream.receivedRequests.allSatisfy { $0.headerValues("Authorization").isEmpty })
    }

    @Test func traceIsForwardedWithoutTheCredential() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port),
                auth: AuthConfig(kind: .bearer(token: Self.token))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let get = try await gateway.curl(["http://api.test/echo"]).json(EchoReply.self)
        #expect(get.values("Authorization") == ["Bearer \(Self.token.value)"], "control: in scope")
        let trace = try await gateway.curl(["-X", "TRACE", "http://api.test/echo"])
        #expect(!trace.stdoutString.contains(Self.token.value))
        let traced = upstream.receivedRequests.filter { $0.method == "TRACE" }
        #expect(traced.count == 1)
        #expect(traced.allSatisfy { $0.headerValues("Authorization").isEmpty })
    }
}
