import GatewayConfig
import GatewayCore
@testable import GatewayPolicies
@testable import GatewaySharedState
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Testing

/// `query_timeout`: a database that stops answering on an open connection
/// counts as down after it, instead of stalling whoever waits on it.
@Suite("shared_state query_timeout", .serialized, .timeLimit(.minutes(2)))
struct SharedStateQueryTimeoutTests {
    /// A replica of `fixture`'s cluster whose statements must answer within `queryTimeout`.
    static func replica(of fixture: SharedStateFixture, queryTimeout: Duration) async throws -> (SharedStateDatabase, Task<Void, Never>) {
        var config = SharedStateFixture.config(fixture.cluster.url)
        config.queryTimeout = queryTimeout
        let database = SharedStateDatabase(config: config, logger: Logger(label: "test.shared"))
        let runner = Task { await database.run() }
        _ = try await database.migrate()
        return (database, runner)
    }

    @Test func aStatementWithoutAnswerClosesItsConnectionAndTheDatabaseCountsAsDown() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 0)
        let (database, runner) = try await Self.replica(of: fixture, queryTimeout: .milliseconds(300))
        #expect(database.health.isAvailable)

        let started = ContinuousClock.now
        let error = await #expect(throws: SharedStateUnavailable.self) {
            try await database.withConnection("sleep") { session in
                try await session.connection.query("SELECT pg_sleep(30)", logger: Logger(label: "test"))
                return true
            }
        }
        #expect(ContinuousClock.now - started < .seconds(15), "cut short, not answered after pg_sleep's 30 s")
        #expect(error?.reason == "sleep: no answer within 300ms (query_timeout)")
        #expect(!database.health.isAvailable)
        #expect(database.health.current.lastError == "sleep: no answer within 300ms (query_timeout)")

        // The pool dropped the closed connection: the next operation gets a new one.
        #expect(try await database.serverVersion().isEmpty == false)
        #expect(database.health.isAvailable)
        runner.cancel()
        await runner.value
        await fixture.stop()
    }

    /// As a refresh does when its commit fails: it keeps the token locally and
    /// returns. The statement went unanswered all the same: the database is down.
    @Test func anOperationThatCarriesOnWithoutItsUnansweredStatementStillMarksTheDatabaseDown() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 0)
        let (database, runner) = try await Self.replica(of: fixture, queryTimeout: .milliseconds(300))
        let result = try await database.withConnection("commit") { session in
            do {
                try await session.connection.query("SELECT pg_sleep(30)", logger: Logger(label: "test"))
                return "committed"
            } catch {
                return "kept locally"
            }
        }
        #expect(result == "kept locally")
        #expect(!database.health.isAvailable)
        #expect(database.health.current.lastError == "commit: no answer within 300ms (query_timeout)")
        runner.cancel()
        await runner.value
        await fixture.stop()
    }

    @Test func aLeaseBlockedByALockElsewhereFallsBackToTheLocalBucketWhileTheLockIsHeld() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1)
        let (database, runner) = try await Self.replica(of: fixture, queryTimeout: .milliseconds(300))
        let locked = NIOLockedValueBox(false)
        let release = NIOLockedValueBox(false)
        let unlocked = NIOLockedValueBox(false)
        // Another session holds the buckets' table (the lock stands for any database that stops answering).
        let holder = Task {
            try await fixture.databases[0].withConnection("hold the buckets") { session in
                let logger = Logger(label: "test")
                try await session.connection.query("BEGIN", logger: logger)
                try await session.connection.query("LOCK TABLE gateway_rate_buckets IN ACCESS EXCLUSIVE MODE", logger: logger)
                locked.withLockedValue { $0 = true }
                for _ in 0..<60 where !release.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
                unlocked.withLockedValue { $0 = true }
                try await session.connection.query("ROLLBACK", logger: logger)
                return true
            }
        }
        while !locked.withLockedValue({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }

        let parameters = RateLimiter.Parameters(requestsPerSecond: 100, burst: 5, maxQueue: 10, maxWait: .seconds(10))
        let limiter = RateLimiter(parameters, clock: SystemPolicyClock(), shared: .init(backend: PostgresRateLimits(database: database), key: "payments"))
        #expect(try await limiter.admitted())
        #expect(!unlocked.withLockedValue { $0 }, "admitted while the lock was still held")
        #expect(!database.health.isAvailable)
        #expect(database.health.current.lastError?.contains("lease rate-limit tokens: no answer within 300ms") == true)

        release.withLockedValue { $0 = true }
        #expect(try await holder.value)
        runner.cancel()
        await runner.value
        await fixture.stop()
    }
}
