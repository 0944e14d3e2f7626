import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import NIOConcurrencyHelpers
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

    /// Issue 54: the method's case does not matter (`trace` reached the
    /// origin with the token, `TRACE` did not); `TRACK` is echoed the same way.
    /// The origin is a raw one that records the head it got (NIO's parser
    /// would refuse a lowercase method before the test could see it).
    @Test(arguments: ["trace", "Trace", "track"])
    func anEchoMethodInAnyCaseIsForwardedWithoutTheCredential(_ method: String) async throws {
        let heads = NIOLockedValueBox<[String]>([])
        let origin = try await RawTCPServer.start { connection in
            let head = try await connection.receiveUntil("\r\n\r\n")
            heads.withLockedValue { $0.append(String(decoding: head, as: UTF8.self)) }
            try await connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        }
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: origin.port),
                auth: AuthConfig(kind: .bearer(token: Self.token))
            )]
        }
        defer { Task { try? await gateway.stop(); try? await origin.shutdown() } }
        let result = try await gateway.curl(["-X", method, "http://api.test/echo"])
        #expect(result.stdoutString == "ok", "\(result.stderrString)")
        let received = heads.withLockedValue { $0 }
        #expect(received.count == 1 && received.allSatisfy { $0.hasPrefix("\(method) /echo HTTP/1.1\r\n") }, "forwarded as sent: \(received)")
        #expect(!received.contains { $0.contains(Self.token.value) || $0.lowercased().contains("authorization:") }, "no credential: \(received)")
    }
}
