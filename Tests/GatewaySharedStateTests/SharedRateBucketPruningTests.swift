import GatewayTesting
@testable import GatewaySharedState
import Logging
import PostgresNIO
import Testing

/// `gateway_rate_buckets` does not grow without bound: a bucket full for a
/// minute is deleted (a missing row is a full bucket on its next lease).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedRateBucketPruningTests {
    @Test func bucketsFullForAMinuteArePrunedAndOthersStay() async throws {
        let fixture = try await SharedStateFixture.start(replicas: 1)
        let limits = PostgresRateLimits(database: fixture.databases[0])
        // Emptied: full again 1 s later at 10/s; 10,000 s later at 0.001/s.
        #expect(try await limits.lease(bucket: "fast", rate: 10, burst: 10, want: 10).granted == 10)
        #expect(try await limits.lease(bucket: "slow", rate: 0.001, burst: 10, want: 10).granted == 10)
        let refill = try await fixture.cluster.psql(
            "SELECT string_agg(key || '=' || round(extract(epoch FROM full_at - updated_at))::text, ',' ORDER BY key) FROM gateway_rate_buckets"
        )
        #expect(refill == "fast=1,slow=10000")

        try await limits.prune()
        #expect(try await fixture.cluster.psql("SELECT count(*) FROM gateway_rate_buckets") == "2", "the fast one is not full for a minute yet")

        // Two minutes pass (the rows are aged: a test does not wait them out).
        _ = try await fixture.cluster.psql("UPDATE gateway_rate_buckets SET updated_at = updated_at - interval '2 minutes', full_at = full_at - interval '2 minutes'")
        try await limits.prune()
        #expect(try await fixture.cluster.psql("SELECT string_agg(key, ',') FROM gateway_rate_buckets") == "slow")
        // The pruned bucket leases as the full bucket it was.
        #expect(try await limits.lease(bucket: "fast", rate: 10, burst: 10, want: 10).granted == 10)
        #expect(try await limits.lease(bucket: "slow", rate: 0.001, burst: 10, want: 10).granted == 0)
        await fixture.stop()
    }

    @Test func aDatabaseOfTheFirstSchemaIsMigratedWithItsBucketsKept() async throws {
        let cluster = try await PostgresTestCluster.start()
        // What a gateway of schema version 1 left: its tables, function and a bucket row.
        let first = SharedStateSchema.migrations[0].map(\.sql).joined(separator: ";\n")
        _ = try await cluster.psql(
            """
            CREATE TABLE gateway_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp());
            \(first);
            INSERT INTO gateway_schema_migrations (version) VALUES (1);
            INSERT INTO gateway_rate_buckets (key, tokens, updated_at) VALUES ('payments', 3, clock_timestamp());
            """
        )
        let database = SharedStateDatabase(config: SharedStateFixture.config(cluster.url), logger: Logger(label: "test.shared"))
        let runner = Task { await database.run() }
        #expect(try await database.migrate() == 2)
        #expect(try await cluster.psql("SELECT key || ':' || tokens || ':' || (full_at IS NULL)::text FROM gateway_rate_buckets") == "payments:3:true")
        let limits = PostgresRateLimits(database: database)
        try await limits.prune()
        #expect(try await cluster.psql("SELECT count(*) FROM gateway_rate_buckets") == "1", "a row without full_at stays")
        // Its next lease writes when it is full again.
        #expect(try await limits.lease(bucket: "payments", rate: 0.01, burst: 10, want: 1).granted == 1)
        #expect(try await cluster.psql("SELECT round(extract(epoch FROM full_at - updated_at))::text FROM gateway_rate_buckets") == "800")
        runner.cancel()
        await runner.value
        await cluster.stop()
    }
}
