import Logging
import PostgresNIO

/// The tables the replicas share, created on start by whichever replica comes
/// first: versioned migrations, applied in order under an advisory lock (so
/// replicas starting together do not race), each recorded in
/// `gateway_schema_migrations`. Idempotent: a migrated database is left alone.
enum SharedStateSchema {
    /// The advisory lock key of migrations (any constant unique to this program).
    static let migrationLock: Int64 = 0x6761_7465_7761_7901
    /// How long a migration may wait for other replicas' (beyond `query_timeout`).
    static let migrationLockWait: Duration = .seconds(30)

    /// Migration N is `migrations[N - 1]`; never edit one that shipped, append.
    static let migrations: [[PostgresQuery]] = [
        [
            """
            CREATE TABLE IF NOT EXISTS gateway_oauth_tokens (
                credential text PRIMARY KEY,
                access_token text,
                expires_at double precision,
                obtained_at double precision,
                refresh_token text,
                updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                updated_by text
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS gateway_rate_buckets (
                key text PRIMARY KEY,
                tokens double precision NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE IF NOT EXISTS gateway_upstream_holds (
                authority text PRIMARY KEY,
                until timestamptz NOT NULL
            )
            """,
            // One lease of a shared token bucket, atomically (the row is locked
            // for the statement): refill by the database's clock, take up to
            // `want` whole tokens, say when the next one is due if none.
            """
            CREATE OR REPLACE FUNCTION gateway_lease_tokens(p_key text, p_rate double precision, p_burst double precision, p_want integer)
            RETURNS TABLE (granted integer, next_token_s double precision) LANGUAGE plpgsql AS $$
            DECLARE
                v_now timestamptz := clock_timestamp();
                v_tokens double precision;
                v_updated timestamptz;
            BEGIN
                INSERT INTO gateway_rate_buckets (key, tokens, updated_at) VALUES (p_key, p_burst, v_now) ON CONFLICT (key) DO NOTHING;
                SELECT b.tokens, b.updated_at INTO v_tokens, v_updated FROM gateway_rate_buckets b WHERE b.key = p_key FOR UPDATE;
                v_tokens := least(p_burst, v_tokens + greatest(0, extract(epoch FROM (v_now - v_updated))) * p_rate);
                granted := greatest(0, least(p_want, floor(v_tokens + 1e-9)::integer));
                v_tokens := v_tokens - granted;
                UPDATE gateway_rate_buckets SET tokens = v_tokens, updated_at = v_now WHERE key = p_key;
                next_token_s := CASE WHEN granted > 0 THEN 0 ELSE greatest(0, 1 - v_tokens) / p_rate END;
                RETURN NEXT;
            END
            $$
            """,
        ],
        // 2. Buckets say when they are full again (`full_at`): a full bucket is
        //    what a missing row becomes on its next lease, so rows full for a
        //    while can go (``PostgresRateLimits/prune()``). A row another
        //    replica leases meanwhile is locked and no longer full: not deleted.
        [
            "ALTER TABLE gateway_rate_buckets ADD COLUMN IF NOT EXISTS full_at timestamptz",
            "CREATE INDEX IF NOT EXISTS gateway_rate_buckets_full_at ON gateway_rate_buckets (full_at)",
            """
            CREATE OR REPLACE FUNCTION gateway_lease_tokens(p_key text, p_rate double precision, p_burst double precision, p_want integer)
            RETURNS TABLE (granted integer, next_token_s double precision) LANGUAGE plpgsql AS $$
            DECLARE
                v_now timestamptz := clock_timestamp();
                v_tokens double precision;
                v_updated timestamptz;
            BEGIN
                INSERT INTO gateway_rate_buckets (key, tokens, updated_at, full_at) VALUES (p_key, p_burst, v_now, v_now) ON CONFLICT (key) DO NOTHING;
                SELECT b.tokens, b.updated_at INTO v_tokens, v_updated FROM gateway_rate_buckets b WHERE b.key = p_key FOR UPDATE;
                IF NOT FOUND THEN
                    -- Pruned between the two statements: ask again at once (the next lease inserts it).
                    granted := 0;
                    next_token_s := 0;
                    RETURN NEXT;
                    RETURN;
                END IF;
                v_tokens := least(p_burst, v_tokens + greatest(0, extract(epoch FROM (v_now - v_updated))) * p_rate);
                granted := greatest(0, least(p_want, floor(v_tokens + 1e-9)::integer));
                v_tokens := v_tokens - granted;
                UPDATE gateway_rate_buckets
                SET tokens = v_tokens, updated_at = v_now, full_at = v_now + make_interval(secs => greatest(0, p_burst - v_tokens) / p_rate)
                WHERE key = p_key;
                next_token_s := CASE WHEN granted > 0 THEN 0 ELSE greatest(0, 1 - v_tokens) / p_rate END;
                RETURN NEXT;
            END
            $$
            """,
        ],
    ]

    static var latestVersion: Int { migrations.count }

    /// Applies the missing migrations; returns the schema version.
    static func migrate(_ session: DatabaseSession, logger: Logger) async throws -> Int {
        let connection = session.connection
        try await connection.query("BEGIN", logger: logger)
        do {
            // Replicas starting together wait here for each other's migration.
            session.allow(migrationLockWait)
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            session.allow()
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS gateway_schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())",
                logger: logger
            )
            var current = 0
            for try await version in try await connection.query("SELECT coalesce(max(version), 0) FROM gateway_schema_migrations", logger: logger).decode(Int.self) {
                current = version
            }
            if current < latestVersion {
                for version in (current + 1)...latestVersion {
                    for statement in migrations[version - 1] {
                        try await connection.query(statement, logger: logger)
                    }
                    try await connection.query("INSERT INTO gateway_schema_migrations (version) VALUES (\(version))", logger: logger)
                    logger.notice("shared state schema migrated", metadata: ["version": "\(version)"])
                }
            }
            try await connection.query("COMMIT", logger: logger)
            return max(current, latestVersion)
        } catch {
            _ = try? await connection.query("ROLLBACK", logger: logger)
            throw error
        }
    }
}
