import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// Three live gateways sharing one PostgreSQL (`shared_state.postgres`), each
/// with its own state directory, as three machines would have.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SharedStateReplicaTests {
    static func sharedState(_ cluster: PostgresTestCluster) throws -> SharedStateConfig {
        let endpoint = try PostgresURL.parse(cluster.url).get()
        return SharedStateConfig(postgres: PostgresStateConfig(url: Secret(source: .env("GATEWAY_DATABASE_URL"), value: cluster.url), endpoint: endpoint))
    }

    static func replicas(_ count: Int, cluster: PostgresTestCluster, _ configure: @escaping (Int, inout GatewayConfig) -> Void) async throws -> [GatewayHarness] {
        var gateways: [GatewayHarness] = []
        for index in 0..<count {
            let shared = try sharedState(cluster)
            gateways.append(try await GatewayHarness.start { config in
                configure(index, &config)
                config.sharedState = shared
            })
        }
        // Ready once each has created (or found) the tables.
        for gateway in gateways {
            let ready = await pollUntil(.seconds(30)) { gateway.logs.text.contains("shared state ready") }
            #expect(ready, "\(gateway.logs.text)")
        }
        return gateways
    }

    /// The issue's case: the access token is revoked; 300 concurrent requests
    /// spread over three replicas all succeed, with exactly one token call,
    /// and the refresh-token family (rotation with reuse detection) intact.
    @Test func aRevokedTokenCostsOneTokenCallAcrossThreeReplicas() async throws {
        let cluster = try await PostgresTestCluster.start()
        let authority = OAuthTestAuthority()
        authority.setRevokeFamilyOnReuse(true)
        let f = try await OAuthTests.Fixture.start(authority: authority)
        let gateways = try await Self.replicas(3, cluster: cluster) { index, config in
            f.configure(&config)
            config.stateDir = f.stateDir + "-replica-\(index)"
        }
        defer { Task { for gateway in gateways { try? await gateway.stop() }; await f.shutdown(); await cluster.stop() } }

        for gateway in gateways {
            let warm = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://api.payments.test/custom/warm"])
            #expect(warm.stdoutString == "200", "\(gateway.logs.text)")
        }
        #expect(authority.tokenCallCount == 1, "one replica obtained the first token; the others adopted it")

        authority.revokeAccessTokens()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<300 {
                group.addTask { try await OAuthTests.rawGet(gateways[i % 3], "/custom/charge/\(i)") }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 300))
        #expect(authority.tokenCallCount == 2, "startup + exactly one refresh for the whole cluster")
        #expect(!authority.familyRevoked)
        let committed = try await cluster.psql("SELECT refresh_token FROM gateway_oauth_tokens")
        #expect(authority.validRefreshTokens == [committed])
        // Each replica reports the shared state up, and /readyz says so.
        for gateway in gateways {
            let ready = try await ProcessRunner.run("curl", ["-s", "\(gateway.adminURL)/readyz"]).stdoutString
            #expect(ready.contains(#""shared_state":"available""#), "\(ready)")
            let metrics = try await OAuthTests.metrics(gateway)
            #expect(metrics.contains("gateway_shared_state_up 1"))
        }
        let logs = gateways.map(\.logs.text).joined(separator: "\n")
        for secret in f.secrets + [cluster.url, "test-pw-9x"] { #expect(!logs.contains(secret)) }
    }

    /// A 429 with `Retry-After` that one replica saw holds the others' requests to that host too.
    @Test func aRetryAfterSeenByOneReplicaPausesTheOthers() async throws {
        let cluster = try await PostgresTestCluster.start()
        let upstream = try await TestUpstream.start()
        let served = NIOLockedValueBox(0)
        upstream.setResponder { _ in
            let n = served.withLockedValue { $0 += 1; return $0 }
            return n == 1 ? .text("slow down\n", status: 429, headers: [("Retry-After", "2")]) : .text("ok\n")
        }
        let gateways = try await Self.replicas(2, cluster: cluster) { _, config in
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!], rateLimit: RateLimitConfig(requestsPerSecond: nil))]
        }
        defer { Task { for gateway in gateways { try? await gateway.stop() }; try? await upstream.shutdown(); await cluster.stop() } }

        let first = try await gateways[0].curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/a")])
        #expect(first.stdoutString == "429")
        // The other replica learns the pause at its next sync (250 ms), then holds its request until it ends.
        try await Task.sleep(for: .milliseconds(600))
        let start = ContinuousClock.now
        let second = try await gateways[1].curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/custom/b")])
        let waited = ContinuousClock.now - start
        #expect(second.stdoutString == "200")
        #expect(waited >= .milliseconds(900) && waited < .seconds(8), "held for the rest of the 2 s pause: \(waited)")
        #expect(served.withLockedValue { $0 } == 2)
    }

    /// The database stops and starts again mid-run (`on_unavailable: local`):
    /// no request fails for lack of it, a token refreshed meanwhile is
    /// obtained locally, and written to the database once it answers.
    @Test func aDatabaseRestartFailsNoRequestAndTheNewTokenIsReconciled() async throws {
        let cluster = try await PostgresTestCluster.start()
        let f = try await OAuthTests.Fixture.start()
        let gateways = try await Self.replicas(2, cluster: cluster) { index, config in
            f.configure(&config)
            config.stateDir = f.stateDir + "-replica-\(index)"
            config.upstreams[1].rateLimit = RateLimitConfig(requestsPerSecond: 1000, burst: 100)
        }
        defer { Task { for gateway in gateways { try? await gateway.stop() }; await f.shutdown(); await cluster.stop() } }
        #expect(try await OAuthTests.rawGet(gateways[0], "/custom/warm") == 200)
        // The other replica learns the token (and refresh token) at its next sync, before any outage.
        #expect(await pollUntil(.seconds(10)) { gateways[1].logs.text.contains("adopted the token another gateway committed") }, "\(gateways[1].logs.text)")

        try await cluster.stopServer()
        let down = await pollUntil(.seconds(10)) { gateways.allSatisfy { $0.logs.text.contains("shared state database unavailable") } }
        #expect(down)
        var statuses: [Int] = []
        for i in 0..<10 { statuses.append(try await OAuthTests.rawGet(gateways[i % 2], "/custom/during/\(i)")) }
        // The token is revoked while the database is down: the replica that sees it refreshes on its own.
        // (Only one may: with a rotating refresh token, a second local refresh would fork the family,
        // which is what `on_unavailable: fail` prevents.)
        f.authority.revokeAccessTokens()
        for i in 0..<10 { statuses.append(try await OAuthTests.rawGet(gateways[0], "/custom/revoked/\(i)")) }
        #expect(statuses == Array(repeating: 200, count: 20), "\(gateways[0].logs.text)")
        #expect(f.authority.tokenCallCount == 2)
        let ready = try await ProcessRunner.run("curl", ["-s", "\(gateways[0].adminURL)/readyz"]).stdoutString
        #expect(ready.contains(#""shared_state":"unavailable""#) && ready.contains(#""status":"ready""#), "\(ready)")

        try await cluster.startServer()
        let newest = try #require(f.authority.issuedAccessTokens.last)
        var committed = ""
        for _ in 0..<100 where committed != newest {
            committed = (try? await cluster.psql("SELECT access_token FROM gateway_oauth_tokens")) ?? ""
            if committed != newest { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(committed == newest, "the token obtained during the outage was reconciled")
        #expect(await pollUntil(.seconds(10)) { gateways.allSatisfy { $0.logs.text.contains("shared state database available again") } })
        // The other replica adopts the reconciled token: no token call of its own, no forked family.
        #expect(await pollUntil(.seconds(10)) { gateways[1].logs.text.components(separatedBy: "adopted the token another gateway committed").count >= 3 })
        #expect(try await OAuthTests.rawGet(gateways[1], "/custom/after") == 200)
        #expect(f.authority.tokenCallCount == 2)
        #expect(!f.authority.familyRevoked)
    }
}
