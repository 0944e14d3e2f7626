import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// OAuth2 through the running gateway: a TLS token endpoint reached through a
/// configured upstream (its CA file applies), a protected upstream that rejects
/// unknown or expired tokens, curl and raw TCP clients.
@Suite(.timeLimit(.minutes(3)))
struct OAuthTests {
    /// The auth server, the protected upstream and a fresh state directory.
    struct Fixture {
        let auth: OAuthTestServer
        let protected: ProtectedTestUpstream
        let caFile: String
        let stateDir: String
        var authority: OAuthTestAuthority { auth.authority }

        static func start(authority: OAuthTestAuthority = OAuthTestAuthority()) async throws -> Fixture {
            let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
            let dir = try TestCertificates.makeTemporaryDirectory(prefix: "gw-oauth")
            let paths = try certificates.write(to: dir)
            let auth = try await OAuthTestServer.start(authority: authority, tls: try certificates.makeServerContext())
            let protected = try await ProtectedTestUpstream.start(authority: authority)
            return Fixture(auth: auth, protected: protected, caFile: paths.caBundle, stateDir: dir + "/state")
        }

        /// `payments` (OAuth2, refresh_token grant) and `auth` (the token host, TLS with the test CA).
        func configure(_ config: inout GatewayConfig) {
            let oauth = OAuth2Config(
                grant: .refreshToken,
                tokenURL: "https://auth.test\(OAuthTestServer.tokenPath)",
                clientID: Secret(source: .env("PAY_CLIENT_ID"), value: authority.clientID),
                clientSecret: Secret(source: .file("/run/secrets/pay_client_secret"), value: authority.clientSecret!),
                refreshToken: Secret(source: .file("/run/secrets/pay_refresh_token"), value: authority.initialRefreshToken),
                scope: "read write",
                refreshBeforeExpiry: .seconds(60)
            )
            config.stateDir = stateDir
            config.upstreams = [
                UpstreamConfig(
                    name: "auth", hosts: [HostPattern("auth.test")!],
                    origin: UpstreamOrigin(scheme: .https, host: "localhost", port: auth.port),
                    tls: UpstreamTLSSettings(caFile: caFile)
                ),
                UpstreamConfig(
                    name: "payments", hosts: [HostPattern("api.payments.test")!],
                    origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: protected.port),
                    auth: AuthConfig(kind: .oauth2(oauth))
                ),
            ]
        }

        /// Configured secrets and every token issued so far.
        var secrets: [String] {
            [authority.clientSecret!, authority.initialRefreshToken] + authority.issuedAccessTokens + authority.issuedRefreshTokens
        }

        func shutdown() async {
            try? await auth.shutdown()
            try? await protected.shutdown()
            try? FileManager.default.removeItem(atPath: (stateDir as NSString).deletingLastPathComponent)
        }
    }

    /// One request on its own connection; returns the status (or -1).
    static func rawGet(_ gateway: GatewayHarness, _ path: String) async throws -> Int {
        let client = try await gateway.rawConnection()
        try await client.send("GET http://api.payments.test\(path) HTTP/1.1\r\nHost: api.payments.test\r\nConnection: close\r\n\r\n")
        let bytes = try await client.receive(timeout: .seconds(60))
        await client.close()
        return RawResponse(bytes)?.status ?? -1
    }

    static func metrics(_ gateway: GatewayHarness) async throws -> String {
        try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/metrics"]).stdoutString
    }

    /// Single flight, end to end. The gateway holds a token the upstream has
    /// stopped accepting (revoked server-side). 200 raw TCP clients, each on its
    /// own connection, send a request at once; the token endpoint holds the
    /// first call it gets. Only when all 200 requests have been answered 401 by
    /// the upstream is that call released. Result: one token call, 200 × 200.
    @Test func twoHundredConcurrentRequestsWithAnExpiredTokenMakeOneTokenCall() async throws {
        let f = try await Fixture.start()
        let gateway = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }

        let warm = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/warm"])
        #expect(warm.stdoutString == "200", "\(gateway.logs.text)")
        #expect(f.authority.tokenCallCount == 1)
        f.authority.revokeAccessTokens()
        f.authority.holdTokenCalls()

        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<200 {
                group.addTask { try await Self.rawGet(gateway, "/custom/charge/\(i)") }
            }
            let all401 = await pollUntil(.seconds(60)) { f.protected.unauthorizedCount == 200 }
            #expect(all401, "all 200 were rejected before any new token existed (401s: \(f.protected.unauthorizedCount))")
            #expect(f.authority.tokenCallCount == 2)
            #expect(f.authority.heldTokenCallCount == 1)
            f.authority.releaseTokenCalls()
            var all: [Int] = []
            for try await status in group { all.append(status) }
            return all
        }
        #expect(statuses == Array(repeating: 200, count: 200))
        #expect(f.authority.tokenCallCount == 2, "startup + exactly one refresh for 200 concurrent 401s")
        #expect(f.protected.authorizedCount == 201)
        let metrics = try await Self.metrics(gateway)
        #expect(metrics.contains(#"gateway_token_refreshes_total{upstream="payments",trigger="401",result="success"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"gateway_token_refreshes_total{upstream="payments",trigger="first_use",result="success"} 1"#))
    }

    /// The same with curl as the client: 20 curl processes at once.
    @Test func twentyConcurrentCurlsAfterExpiryMakeOneTokenCall() async throws {
        let f = try await Fixture.start()
        let gateway = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        _ = try await gateway.curl(["http://api.payments.test/custom/warm"])
        f.authority.revokeAccessTokens()
        f.authority.holdTokenCalls()
        let codes = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<20 {
                group.addTask {
                    try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/c/\(i)"]).stdoutString
                }
            }
            #expect(await pollUntil(.seconds(60)) { f.protected.unauthorizedCount == 20 })
            f.authority.releaseTokenCalls()
            var all: [String] = []
            for try await code in group { all.append(code) }
            return all
        }
        #expect(codes == Array(repeating: "200", count: 20))
        #expect(f.authority.tokenCallCount == 2)
    }

    /// The token endpoint refuses (or fails): every waiting client gets 401
    /// `token_refresh_failed` with the endpoint's error code, one token call for
    /// all; the next request, within the backoff, fails without a call. No secret
    /// in any response body or log line.
    @Test(arguments: [("invalid_grant", OAuthTestAuthority.Mode.invalidGrant), ("server_error", .serverError(500))])
    func refreshFailureReachesEveryWaiterOnce(_ expected: String, _ mode: OAuthTestAuthority.Mode) async throws {
        let f = try await Fixture.start()
        let gateway = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        f.authority.setMode(mode)
        f.authority.holdTokenCalls()
        nonisolated(unsafe) var released = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: ProcessResult.self) { group in
            for i in 0..<10 {
                group.addTask { try await gateway.curl(["-i", "http://api.payments.test/custom/p/\(i)"]) }
            }
            // Requests arriving while the call is held join it; any arriving after
            // its failure get the same failure from the backoff, without a call.
            #expect(await pollUntil(.seconds(30)) { f.authority.heldTokenCallCount == 1 })
            f.authority.releaseTokenCalls()
            released = ContinuousClock.now
            var all: [ProcessResult] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(f.authority.tokenCallCount == 1, "one call for all ten waiters")
        for result in results {
            let response = try #require(RawResponse(result.stdout))
            #expect(response.status == 401)
            #expect(response.header("X-Gateway-Error") == "token_refresh_failed")
            #expect(response.bodyText.contains(#""cause":"\#(expected)""#), "\(response.bodyText)")
            #expect(response.bodyText.contains(#""upstream":"127.0.0.1:\#(f.protected.port)""#), "\(response.bodyText)")
            for secret in f.secrets { #expect(!response.bodyText.contains(secret)) }
        }
        #expect(f.protected.receivedRequests.isEmpty, "nothing reached the upstream without a token")
        // Backoff (1 s after the first failure): fail fast, no new call. Checked only
        // when the machine got the request out within it; the backoff itself is
        // unit-tested with a manual clock (TokenStoreTests).
        f.authority.setMode(.normal)
        let again = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/again"])
        if ContinuousClock.now - released < .milliseconds(900) {
            #expect(again.stdoutString == "401")
            #expect(f.authority.tokenCallCount == 1)
        }
        let metrics = try await Self.metrics(gateway)
        #expect(metrics.contains(#"gateway_token_refreshes_total{upstream="payments",trigger="first_use",result="failure"} 1"#), "\(metrics)")
        for secret in f.secrets { #expect(!gateway.logs.text.contains(secret)) }
    }

    @Test func slowTokenEndpointTimesOut() async throws {
        let f = try await Fixture.start()
        let gateway = try await GatewayHarness.start { config in
            f.configure(&config)
            config.pool.requestTimeout = .milliseconds(500)
        }
        defer { Task { try? await gateway.stop(); await f.shutdown() } }
        f.authority.setMode(.slow(.seconds(3)))
        let result = try await gateway.curl(["-i", "http://api.payments.test/custom/slow"])
        let response = try #require(RawResponse(result.stdout))
        #expect(response.status == 401)
        #expect(response.bodyText.contains(#""cause":"request_timeout""#), "\(response.bodyText)")
    }

    /// The rotated refresh token is on disk (0600, no temporary file left), and a
    /// restarted gateway uses the stored access token without a token call, then
    /// refreshes with the stored rotated refresh token.
    @Test func rotationIsPersistedAndARestartedGatewayReusesTheStoredToken() async throws {
        let f = try await Fixture.start()
        let first = try await GatewayHarness.start { f.configure(&$0) }
        let one = try await first.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/one"])
        #expect(one.stdoutString == "200")
        try await first.stop()
        #expect(f.authority.tokenCallCount == 1)
        let rotated = try #require(f.authority.issuedRefreshTokens.last)
        #expect(!f.authority.validRefreshTokens.contains(f.authority.initialRefreshToken), "the configured refresh token is spent")

        let path = f.stateDir + "/payments.json"
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(json["refresh_token"] as? String == rotated)
        #expect(json["access_token"] as? String == f.authority.issuedAccessTokens.last)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try FileManager.default.attributesOfItem(atPath: f.stateDir)[.posixPermissions] as? Int == 0o700)
        #expect(try FileManager.default.contentsOfDirectory(atPath: f.stateDir) == ["payments.json"])

        let second = try await GatewayHarness.start { f.configure(&$0) }
        defer { Task { try? await second.stop(); await f.shutdown() } }
        let two = try await second.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/two"])
        #expect(two.stdoutString == "200")
        #expect(f.authority.tokenCallCount == 1, "the stored token was reused without a token call")
        // When the upstream rejects it, the restarted gateway refreshes with the rotated token.
        f.authority.revokeAccessTokens()
        let three = try await second.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/three"])
        #expect(three.stdoutString == "200")
        #expect(f.authority.tokenCallCount == 2)
        #expect(f.authority.tokenCalls.last?.form["refresh_token"] == rotated)
        for secret in f.secrets { #expect(!second.logs.text.contains(secret) && !first.logs.text.contains(secret)) }
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func pollUntil(_ timeout: Duration, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition(), ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
