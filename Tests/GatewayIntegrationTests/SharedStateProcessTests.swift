import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import NIOConcurrencyHelpers
import Testing

/// Gateway processes sharing one PostgreSQL: a replica killed while it holds
/// the refresh lock, and `check-config`'s report on the database.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SharedStateProcessTests {
    static func config(_ f: OAuthTests.Fixture, stateDir: String) -> String {
        """
        listen:
          proxy: 127.0.0.1:0
          admin: 127.0.0.1:0
        state_dir: \(stateDir)
        shared_state:
          postgres:
            url_env: GATEWAY_DATABASE_URL
        upstreams:
          - name: auth
            hosts: [auth.test]
            origin: https://localhost:\(f.auth.port)
            tls:
              ca_file: \(f.caFile)
          - name: payments
            hosts: [api.payments.test]
            origin: http://127.0.0.1:\(f.protected.port)
            auth:
              type: oauth2
              grant: refresh_token
              token_url: https://auth.test\(OAuthTestServer.tokenPath)
              client_id_env: PAY_CLIENT_ID
              client_secret_env: PAY_CLIENT_SECRET
              refresh_token_env: PAY_REFRESH_TOKEN
        """
    }

    static func environment(_ f: OAuthTests.Fixture, _ cluster: PostgresTestCluster) -> [String: String] {
        [
            "GATEWAY_DATABASE_URL": cluster.url, "PAY_CLIENT_ID": f.authority.clientID,
            "PAY_CLIENT_SECRET": f.authority.clientSecret!, "PAY_REFRESH_TOKEN": f.authority.initialRefreshToken,
        ]
    }

    /// `count` gateway processes on `cluster`, each with its own config file and state directory.
    static func startReplicas(_ count: Int, directory: String, environment: [String: String], config: (Int) -> String) async throws -> (gateways: [GatewayProcess], ports: [Int]) {
        var gateways: [GatewayProcess] = []
        var ports: [Int] = []
        for index in 0..<count {
            let path = directory + "-\(index).yaml"
            try config(index).write(toFile: path, atomically: true, encoding: .utf8)
            let gateway = try GatewayProcess(arguments: ["run", "--config", path], environment: environment)
            gateways.append(gateway)
            ports.append(try #require(await gateway.listeningPort("proxy"), "\(gateway.log)"))
            #expect(await gateway.waitForLog("shared state ready"), "\(gateway.log)")
        }
        return (gateways, ports)
    }

    /// One GET of `path` through the proxy on `port`, on its own connection; the status (or -1).
    static func rawGet(_ port: Int, _ url: String) async throws -> Int {
        let client = try await RawTCPClient.connect(host: "127.0.0.1", port: port)
        let host = URL(string: url)?.host ?? "localhost"
        try await client.send("GET \(url) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
        let bytes = try await client.receive(timeout: .seconds(60))
        await client.close()
        return RawResponse(bytes)?.status ?? -1
    }

    /// The case with processes: after the access token is revoked,
    /// 300 concurrent requests spread over three gateway processes all
    /// succeed with exactly one token call, and the family is intact.
    @Test func threeProcessesAndARevocationCostOneTokenCall() async throws {
        let replicas = try await OAuthReplicas.start()
        defer { replicas.stop() }
        let (f, ports) = (replicas.fixture, replicas.ports)
        for port in ports { #expect(try await Self.get(port, "/custom/warm") == "200") }
        #expect(f.authority.tokenCallCount == 1)

        f.authority.revokeAccessTokens()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<300 {
                group.addTask { try await Self.rawGet(ports[i % 3], "http://api.payments.test/custom/charge/\(i)") }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 300))
        #expect(f.authority.tokenCallCount == 2, "one refresh for the whole cluster")
        #expect(!f.authority.familyRevoked)
    }

    /// A 10 requests/s bucket holds across three gateway processes: what the
    /// upstream receives in 3 s stays within one bucket (burst 1 + 30) plus
    /// one leased token per replica.
    @Test func aBucketHoldsItsRateAcrossThreeProcesses() async throws {
        let cluster = try await PostgresTestCluster.start()
        let upstream = try await TestUpstream.start()
        let arrivals = NIOLockedValueBox<[ContinuousClock.Instant]>([])
        upstream.setResponder { _ in
            arrivals.withLockedValue { $0.append(.now) }
            return .text("ok\n")
        }
        let directory = TestScratch.path("gw-rate")
        let (gateways, ports) = try await Self.startReplicas(3, directory: directory, environment: ["GATEWAY_DATABASE_URL": cluster.url]) { index in
            """
            listen: {proxy: 127.0.0.1:0, admin: 127.0.0.1:0}
            state_dir: \(directory)-\(index)
            shared_state: {postgres: {url_env: GATEWAY_DATABASE_URL}}
            upstreams:
              - name: api
                hosts: [127.0.0.1]
                rate_limit: {requests_per_second: 10, burst: 1, max_queue: 1000, max_wait: 60s}
            """
        }
        defer {
            for gateway in gateways { gateway.signal(SIGKILL) }
            Task { try? await upstream.shutdown(); await cluster.stop() }
        }
        // Past the first sync, so every replica leases from the shared bucket.
        try await Task.sleep(for: .milliseconds(500))
        let start = ContinuousClock.now
        let window: Duration = .seconds(3)
        await withTaskGroup(of: Void.self) { group in
            for port in ports {
                for _ in 0..<5 {
                    group.addTask {
                        while ContinuousClock.now - start < window {
                            _ = try? await Self.rawGet(port, upstream.url("/custom/limited"))
                        }
                    }
                }
            }
        }
        let inWindow = arrivals.withLockedValue { $0.filter { $0 >= start && $0 - start < window }.count }
        print("shared bucket, 3 gateway processes at 10/s (burst 1) for 3 s: \(inWindow) requests reached the upstream (one bucket alone: 31)")
        #expect(inWindow <= 31 + 3, "\(inWindow)")
        #expect(inWindow >= 24, "\(inWindow)")
    }

    /// Three gateway processes on one database, with the OAuth fixture (its
    /// authority revokes a reused refresh token's whole family).
    struct OAuthReplicas {
        let cluster: PostgresTestCluster
        let fixture: OAuthTests.Fixture
        let gateways: [GatewayProcess]
        let ports: [Int]

        static func start() async throws -> OAuthReplicas {
            let cluster = try await PostgresTestCluster.start()
            let f = try await OAuthTests.Fixture.start()
            f.authority.setRevokeFamilyOnReuse(true)
            let (gateways, ports) = try await SharedStateProcessTests.startReplicas(3, directory: f.stateDir, environment: SharedStateProcessTests.environment(f, cluster)) { index in
                SharedStateProcessTests.config(f, stateDir: f.stateDir + "-\(index)")
            }
            return OAuthReplicas(cluster: cluster, fixture: f, gateways: gateways, ports: ports)
        }

        func stop() {
            for gateway in gateways { gateway.signal(SIGKILL) }
            Task { await fixture.shutdown(); await cluster.stop() }
        }
    }

    static func get(_ port: Int, _ path: String) async throws -> String {
        try await ProcessRunner.run(
            "curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "40", "-x", "http://127.0.0.1:\(port)", "http://api.payments.test\(path)"],
            environment: ["NO_PROXY": "", "no_proxy": ""], timeout: .seconds(45)
        ).stdoutString
    }

    /// The replica that holds the credential's lock is SIGKILLed in the middle
    /// of its token call. Its connection to the database dies with it, and so
    /// does the lock: another replica refreshes, the third adopts its token,
    /// and the refresh-token family (reuse revokes it) is not forked.
    @Test func aReplicaKilledMidRefreshReleasesTheLockAndAnotherTakesOver() async throws {
        let replicas = try await OAuthReplicas.start()
        defer { replicas.stop() }
        let (cluster, f, gateways, ports) = (replicas.cluster, replicas.fixture, replicas.gateways, replicas.ports)
        #expect(try await Self.get(ports[0], "/custom/warm") == "200")
        #expect(f.authority.tokenCallCount == 1)

        f.authority.revokeAccessTokens()
        f.authority.holdTokenCalls()
        let (port0, port1, port2) = (ports[0], ports[1], ports[2])
        async let first = Self.get(port0, "/custom/a")
        #expect(await pollUntil(.seconds(20)) { f.authority.heldTokenCallCount == 1 }, "replica 0 is in its token call, holding the lock")
        async let second = Self.get(port1, "/custom/b")
        async let third = Self.get(port2, "/custom/c")
        // Both wait on the credential's row lock in the database (whether they saw a 401 first or had no token yet).
        var waiting = ""
        for _ in 0..<200 where waiting != "2" {
            waiting = try await cluster.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            if waiting != "2" { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(waiting == "2", "the other replicas wait for the lock")
        #expect(f.authority.heldTokenCallCount == 1, "they wait on the database lock, not at the token endpoint")

        let killedAt = ContinuousClock.now
        gateways[0].signal(SIGKILL)
        // The authority never processes the dead replica's call (its client is gone): nothing rotated.
        f.authority.dropOldestHeldTokenCall()
        f.authority.releaseTokenCalls()
        let (b, c) = try await (second, third)
        let recovery = ContinuousClock.now - killedAt
        #expect(b == "200" && c == "200", "\(gateways[1].log)\n\(gateways[2].log)")
        #expect(recovery < .seconds(5), "recovered in \(recovery)")
        _ = try? await first
        #expect(f.authority.tokenCallCount == 3, "warm-up, the dead replica's dropped call, one refresh by a survivor")
        #expect(!f.authority.familyRevoked)
        #expect(try await cluster.psql("SELECT refresh_token FROM gateway_oauth_tokens") == f.authority.validRefreshTokens.first)
        for gateway in gateways.dropFirst() {
            for secret in f.secrets { #expect(!gateway.log.contains(secret)) }
            #expect(!gateway.log.contains("test-pw-9x"))
        }
    }

    @Test func checkConfigSaysWhetherTheDatabaseAnswers() async throws {
        let cluster = try await PostgresTestCluster.start()
        defer { Task { await cluster.stop() } }
        let path = TestScratch.path("gw", suffix: ".yaml")
        try "shared_state:\n  postgres:\n    url_env: GATEWAY_DATABASE_URL\n    connect_timeout: 1s\n".write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let up = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", path], environment: ["GATEWAY_DATABASE_URL": cluster.url])
        #expect(up.status == 0, "\(up.stderrString)")
        #expect(up.stderrString.contains("answers (PostgreSQL "), "\(up.stderrString)")
        #expect(up.stdoutString.contains("url_env: GATEWAY_DATABASE_URL"))
        #expect(!(up.stdoutString + up.stderrString).contains("test-pw-9x"))

        try await cluster.stopServer()
        let down = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["check-config", path], environment: ["GATEWAY_DATABASE_URL": cluster.url])
        #expect(down.status == 3, "\(down.stderrString)")
        #expect(down.stderrString.contains("does not answer"), "\(down.stderrString)")
        #expect(!down.stderrString.contains("test-pw-9x"))
    }
}
