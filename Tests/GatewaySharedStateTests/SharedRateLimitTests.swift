import GatewayCore
@testable import GatewayPolicies
@testable import GatewaySharedState
import GatewayTesting
import Testing

/// Rate limits shared by replicas through a real PostgreSQL: leases of one
/// bucket, and upstream pauses every replica honours.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedRateLimitTests {
    @Test func aLeaseTakesWholeTokensAndSaysWhenTheNextIsDue() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1)
        let limits = PostgresRateLimits(database: fixture.databases[0])
        // One token every 5 s: a loaded machine's pause between two statements
        // cannot refill one (at 10/s, 100 ms of it did).
        #expect(try await limits.lease(bucket: "payments", rate: 0.2, burst: 10, want: 6).granted == 6)
        #expect(try await limits.lease(bucket: "payments", rate: 0.2, burst: 10, want: 6).granted == 4)
        let empty = try await limits.lease(bucket: "payments", rate: 0.2, burst: 10, want: 6)
        #expect(empty.granted == 0)
        #expect(empty.nextTokenIn > .zero && empty.nextTokenIn <= .milliseconds(5_001))
        // Another bucket is independent.
        #expect(try await limits.lease(bucket: "payments GET /v1/charges", rate: 10, burst: 10, want: 1).granted == 1)
        await fixture.stop()
    }

    /// With a burst of 10 too: a replica's new limiter must not spend its own
    /// full local bucket on top of the shared one (the bound would be 10 per replica higher).
    @Test(arguments: [1, 10])
    func threeReplicasTogetherStayWithinOneBucketPlusOneLeaseEach(burst: Int) async throws {
        let fixture = try await SharedStateFixture.start(replicas: 3)
        let parameters = RateLimiter.Parameters(requestsPerSecond: 10, burst: burst, maxQueue: 1000, maxWait: .seconds(60))
        let limiters = fixture.databases.map { database in
            RateLimitRegistry(shared: PostgresRateLimits(database: database))
                .limiter(upstream: "payments", endpoint: nil, parameters: parameters, clock: SystemPolicyClock(), events: NoGatewayEvents())
        }
        #expect(fixture.databases[0].config.leaseSize(rate: 10, burst: burst) == 1)
        let start = ContinuousClock.now
        let window: Duration = .seconds(3)
        // Each replica admits as fast as it is allowed, until the window closes.
        let admitted = await withTaskGroup(of: Int.self) { group in
            for limiter in limiters {
                for _ in 0..<4 {
                    group.addTask {
                        var count = 0
                        while ContinuousClock.now - start < window {
                            guard (try? await limiter.admitted()) == true else { break }
                            if ContinuousClock.now - start < window { count += 1 }
                        }
                        return count
                    }
                }
            }
            return await group.reduce(0, +)
        }
        print("shared bucket, 3 replicas at 10/s (burst \(burst)) for 3 s: \(admitted) admitted (one bucket alone: \(burst + 30))")
        // One bucket: the burst + 10/s × 3 s; plus at most one leased token per replica.
        #expect(admitted <= burst + 30 + 3, "admitted \(admitted)")
        #expect(admitted >= 24, "admitted \(admitted)")
        await fixture.stop()
    }

    @Test func aPauseOneReplicaSawReachesTheOthers() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 2)
        PostgresRateLimits(database: fixture.databases[0]).publishHold(authority: "api.payments.test:443", duration: .seconds(5))
        var holds: [(authority: String, remaining: Duration)] = []
        for _ in 0..<50 where holds.isEmpty {
            holds = try await PostgresRateLimits(database: fixture.databases[1]).currentHolds()
            if holds.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(holds.map(\.authority) == ["api.payments.test:443"])
        #expect(holds.first.map { $0.remaining > .seconds(3) && $0.remaining <= .seconds(5) } == true)
        await fixture.stop()
    }

    @Test func withTheDatabaseDownALimiterFallsBackToItsLocalBucketOrRefuses() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1)
        let parameters = RateLimiter.Parameters(requestsPerSecond: 100, burst: 5, maxQueue: 10, maxWait: .seconds(1))
        let local = RateLimiter(parameters, clock: SystemPolicyClock(), shared: .init(backend: PostgresRateLimits(database: fixture.databases[0]), key: "payments"))
        try await fixture.cluster.stopServer()
        fixture.databases[0].health.recordFailure("stopped")
        #expect(try await local.admitted())

        let failing = SharedStateFixture.config(fixture.cluster.url, onUnavailable: .fail)
        let database = SharedStateDatabase(config: failing, logger: .init(label: "test"))
        database.health.recordFailure("stopped")
        let refusing = RateLimiter(parameters, clock: SystemPolicyClock(), shared: .init(backend: PostgresRateLimits(database: database), key: "payments"))
        let error = await #expect(throws: GatewayError.self) { try await refusing.admitted() }
        #expect(error?.code == .sharedStateUnavailable)
        await fixture.stop()
    }
}

extension SharedRateLimitTests {
    @Test func aBurstOfTheSamePauseIsWrittenOnce() {
        let database = SharedStateDatabase(config: SharedStateFixture.config("postgres://gateway@127.0.0.1:1/gateway"), logger: .init(label: "test"))
        let until = ContinuousClock.now + .seconds(5)
        #expect(database.claimHoldPublication(authority: "api.test:443", until: until))
        #expect(!database.claimHoldPublication(authority: "api.test:443", until: until))
        #expect(!database.claimHoldPublication(authority: "api.test:443", until: until - .seconds(1)))
        #expect(database.claimHoldPublication(authority: "api.test:443", until: until + .seconds(2)))
        #expect(database.claimHoldPublication(authority: "other.test:443", until: until))
    }
}
