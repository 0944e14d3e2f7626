import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// Credentials through the running gateway, with curl (and raw TCP clients for
/// 200-way concurrency): static types end to end, never to another host, and
/// OAuth2 with a real token endpoint (TLS, through the pool) and a protected upstream.
@Suite(.timeLimit(.minutes(3)))
struct AuthTests {
    static let token = Secret(source: .env("API_TOKEN"), value: "tok-S3cr3t+/=&x")

    func apiUpstream(_ upstream: TestUpstream, hosts: [String] = ["api.test"], auth: AuthConfig.Kind, clientAuth: ClientAuthMode = .replace) -> UpstreamConfig {
        UpstreamConfig(
            name: "api", hosts: hosts.map { HostPattern($0)! },
            // The test upstream speaks plain http: an explicit http:// origin opts the credential into it.
            origin: hosts == ["api.test"] ? UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port)
                : hosts == ["localhost"] ? UpstreamOrigin(scheme: .http, host: "localhost", port: upstream.port) : nil,
            auth: AuthConfig(kind: auth, clientAuth: clientAuth)
        )
    }

    @Test(arguments: ["bearer", "header", "basic", "query"])
    func staticCredentialIsInjectedEndToEnd(_ type: String) async throws {
        let upstream = try await TestUpstream.start()
        let kind: AuthConfig.Kind = switch type {
        case "bearer": .bearer(token: Self.token)
        case "header": .header(name: "X-API-Key", value: Self.token)
        case "basic": .basic(username: "svc", password: Self.token)
        default: .query(parameter: "api_key", value: Self.token)
        }
        let gateway = try await GatewayHarness.start { $0.upstreams = [apiUpstream(upstream, auth: kind)] }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl(["-H", "Authorization: Bearer from-the-client", "http://api.test/echo?page=2"])
        #expect(result.status == 0, "\(result.stderrString)")
        let echo = try result.json(EchoReply.self)
        switch type {
        case "bearer": #expect(echo.values("Authorization") == ["Bearer \(Self.token.value)"])
        case "header":
            #expect(echo.values("X-API-Key") == [Self.token.value])
            // Only the credential's slot is replaced: the user's own Authorization stays beside the key.
            #expect(echo.values("Authorization") == ["Bearer from-the-client"])
        case "basic": #expect(echo.values("Authorization") == ["Basic " + Data("svc:\(Self.token.value)".utf8).base64EncodedString()])
        default:
            #expect(echo.target == "/echo?page=2&api_key=tok-S3cr3t%2B%2F%3D%26x")
            #expect(echo.values("Authorization") == ["Bearer from-the-client"])
        }
        // The exchange's log line comes just after the response.
        #expect(await logEventually(gateway, contains: "GET http://127.0.0.1:\(upstream.port)/echo?page= 200"), "\(gateway.logs.text)")
        #expect(!gateway.logs.text.contains(Self.token.value))
        #expect(!gateway.logs.text.contains(PercentEncodingForTests.encode(Self.token.value)))
    }

    /// A credential that holds CR LF (a bad env var, a hostile token endpoint)
    /// must not split the request head: nothing goes upstream, the client gets the
    /// gateway's own error, and the value shows nowhere.
    @Test func aCredentialWithALineBreakIsNeverWritten() async throws {
        let upstream = try await TestUpstream.start()
        let broken = Secret(source: .env("API_KEY"), value: "k3y-S3cr3t\r\nX-Smuggled: 1")
        let gateway = try await GatewayHarness.start { $0.upstreams = [apiUpstream(upstream, auth: .header(name: "X-API-Key", value: broken))] }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let response = try #require(RawResponse(try await gateway.curl(["-i", "http://api.test/echo"]).stdout))
        #expect(response.status == 500)
        #expect(response.header("X-Gateway-Error") == "internal_error")
        #expect(response.bodyText.contains("X-API-Key"), "\(response.bodyText)")
        #expect(!response.bodyText.contains("k3y-S3cr3t"))
        #expect(upstream.requestsServed == 0)
        // The pool took the connection back: a request without the credential still goes through it.
        let other = try await gateway.curl(["-i", upstream.url("/echo")])
        #expect(RawResponse(other.stdout)?.status == 200)
        #expect(!gateway.logs.text.contains("k3y-S3cr3t"))
    }

    @Test func keepLeavesTheClientsOwnAuthorization() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start {
            $0.upstreams = [apiUpstream(upstream, auth: .bearer(token: Self.token), clientAuth: .keep)]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let own = try await gateway.curl(["-H", "Authorization: Bearer mine", "http://api.test/echo"]).json(EchoReply.self)
        #expect(own.values("Authorization") == ["Bearer mine"])
        let none = try await gateway.curl(["http://api.test/echo"]).json(EchoReply.self)
        #expect(none.values("Authorization") == ["Bearer \(Self.token.value)"])
    }

    /// The upstream `api` is `localhost`; the test upstream also answers as
    /// 127.0.0.1. Only requests whose target is localhost get the credential.
    @Test func noCredentialsOutsideTheUpstreamNorThroughConnectNorByHostHeader() async throws {
        let upstream = try await TestUpstream.start()
        let port = upstream.port
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [apiUpstream(upstream, hosts: ["localhost"], auth: .bearer(token: Self.token))]
            config.access.connectPorts = [port]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // Control: the upstream's own host gets it.
        let matched = try await gateway.curl(["http://localhost:\(port)/echo"]).json(EchoReply.self)
        #expect(matched.values("Authorization") == ["Bearer \(Self.token.value)"])
        // Another host (same server): nothing.
        let other = try await gateway.curl(["http://127.0.0.1:\(port)/echo"]).json(EchoReply.self)
        #expect(other.values("Authorization").isEmpty)
        // A Host header naming the upstream's host does not make it the target.
        let spoofed = try await gateway.curl(["-H", "Host: localhost:\(port)", "http://127.0.0.1:\(port)/echo"]).json(EchoReply.self)
        #expect(spoofed.values("Authorization").isEmpty)
        #expect(spoofed.values("Host") == ["127.0.0.1:\(port)"])
        // CONNECT to the upstream's own host: a blind tunnel, nothing added.
        let tunneled = try await gateway.curl(["-p", "http://localhost:\(port)/echo"]).json(EchoReply.self)
        #expect(tunneled.values("Authorization").isEmpty)
        #expect(tunneled.values("Via").isEmpty, "it went through the tunnel, not the proxy path")
        #expect(upstream.receivedRequests.filter { !$0.headerValues("Authorization").isEmpty }.count == 1)
    }

    /// Two upstreams with different tokens: a request to one carrying the other's
    /// host in `Host` gets its own upstream's credential, never the other's.
    @Test func mismatchingHostHeaderNeverGetsAnotherUpstreamsCredential() async throws {
        let upstream = try await TestUpstream.start()
        let port = upstream.port
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [
                apiUpstream(upstream, hosts: ["localhost"], auth: .bearer(token: Self.token)),
                UpstreamConfig(name: "loopback", hosts: [HostPattern("127.0.0.1")!], origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: port), auth: AuthConfig(kind: .bearer(token: Secret(source: .env("LOOP"), value: "loop-token")))),
            ]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let echo = try await gateway.curl(["-H", "Host: localhost", "http://127.0.0.1:\(port)/echo"]).json(EchoReply.self)
        #expect(echo.values("Authorization") == ["Bearer loop-token"])
    }
}

/// Waits (bounded) for a log line the gateway writes after the response.
func logEventually(_ gateway: GatewayHarness, contains text: String, timeout: Duration = .seconds(5)) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !gateway.logs.text.contains(text), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
    }
    return gateway.logs.text.contains(text)
}

/// The same unreserved-set encoding the policy uses, to look for the encoded secret in logs.
enum PercentEncodingForTests {
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? text
    }
}
