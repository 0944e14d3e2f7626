import GatewayCore
public import GatewayPolicies
import Logging
import PostgresNIO

/// OAuth2 token state in one row per credential (`gateway_oauth_tokens`).
///
/// A refresh runs in a transaction holding the row's lock (`SELECT … FOR
/// UPDATE`): one replica at a time per credential. Whoever gets the lock
/// first reads the row, calls the token endpoint with the newest refresh
/// token, and commits the new access token and the rotated refresh token in
/// that same transaction, before returning it to any request. Replicas
/// waiting on the lock then read the committed row and adopt its token
/// without a token call. A replica that dies mid-refresh loses its
/// connection, and with it the transaction and the lock: the next one takes over.
public struct PostgresTokenCoordinator: SharedTokenCoordination {
    let database: SharedStateDatabase
    /// The longest a refresh waits for another replica's (its token call has its own timeout).
    let lockTimeout: Duration

    public init(database: SharedStateDatabase, lockTimeout: Duration = .seconds(30)) {
        self.database = database
        self.lockTimeout = lockTimeout
    }

    /// SQLSTATE `lock_not_available`: `lock_timeout` passed while waiting for the row.
    static let lockNotAvailable = "55P03"

    public var fallback: SharedStateFallback {
        database.config.onUnavailable == .fail ? .fail : .local
    }

    public var isAvailable: Bool { database.health.isAvailable }

    public func committedState(credential: String) async throws -> OAuth2TokenState? {
        let logger = database.logger
        return try await database.withConnection("read token state") { session in
            try await Self.select(credential, lock: false, on: session.connection, logger: logger)
        }.state
    }

    public func refresh(
        credential: String,
        adopt: @escaping @Sendable (OAuth2TokenState?) -> Bool,
        obtain: @escaping @Sendable (OAuth2TokenState?) async throws -> OAuth2TokenState
    ) async throws -> SharedRefreshOutcome {
        let logger = database.logger
        let replica = database.replicaID
        let lockTimeout = self.lockTimeout
        let lockTimeoutMS = Int(lockTimeout.seconds * 1000)
        return try await database.withConnection("refresh token") { session in
            let connection = session.connection
            try await connection.query("BEGIN", logger: logger)
            let committed: OAuth2TokenState?
            do {
                try await connection.query("SELECT set_config('lock_timeout', \(String(lockTimeoutMS)), true)", logger: logger)
                // Both wait for another replica's refresh, which the server bounds by lock_timeout.
                session.allow(lockTimeout)
                try await connection.query("INSERT INTO gateway_oauth_tokens (credential) VALUES (\(credential)) ON CONFLICT (credential) DO NOTHING", logger: logger)
                committed = try await Self.select(credential, lock: true, on: connection, logger: logger).state
                session.allow()
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                // The lock wait timed out: another replica's refresh holds the row.
                // The database answered, so this is not an outage: no local refresh.
                if SharedStateDatabase.sqlState(of: error) == Self.lockNotAvailable {
                    throw PassThroughError(error: TokenRefreshFailure.sharedRefreshBusy(waited: lockTimeout))
                }
                throw error
            }
            if adopt(committed), let committed {
                _ = try? await connection.query("COMMIT", logger: logger)
                return .adopted(committed)
            }
            let next: OAuth2TokenState
            do {
                // The token call has its own timeout; the row stays locked meanwhile.
                next = try await session.unwatched { try await obtain(committed) }
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw PassThroughError(error: error)
            }
            do {
                try await Self.write(next, credential: credential, replica: replica, on: connection, logger: logger)
                try await connection.query("COMMIT", logger: logger)
                return .committed(next)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                return .uncommitted(next, reason: SharedStateDatabase.describe(error))
            }
        }
    }

    public func reconcile(credential: String, state: OAuth2TokenState) async throws -> OAuth2TokenState {
        let logger = database.logger
        let replica = database.replicaID
        return try await database.withConnection("reconcile token state") { session in
            let connection = session.connection
            try await connection.query(
                """
                INSERT INTO gateway_oauth_tokens AS t (credential, access_token, expires_at, obtained_at, refresh_token, updated_at, updated_by)
                VALUES (\(credential), \(state.accessToken), \(state.expiresAt), \(state.obtainedAt), \(state.refreshToken), clock_timestamp(), \(replica))
                ON CONFLICT (credential) DO UPDATE SET
                    access_token = excluded.access_token, expires_at = excluded.expires_at, obtained_at = excluded.obtained_at,
                    refresh_token = excluded.refresh_token, updated_at = excluded.updated_at, updated_by = excluded.updated_by
                WHERE coalesce(t.obtained_at, 0) < coalesce(excluded.obtained_at, 0)
                """,
                logger: logger
            )
            return try await Self.select(credential, lock: false, on: connection, logger: logger).state ?? state
        }
    }

    public func allCommittedStates() async throws -> [String: OAuth2TokenState] {
        let logger = database.logger
        let rows = try await database.withConnection("read token states") { session in
            var rows: [CommittedRow] = []
            let result = try await session.connection.query(
                "SELECT credential, access_token, expires_at, obtained_at, refresh_token FROM gateway_oauth_tokens WHERE access_token IS NOT NULL",
                logger: logger
            )
            for try await (credential, access, expires, obtained, refresh) in result.decode((String, String?, Double?, Double?, String?).self) {
                rows.append(CommittedRow(state: OAuth2TokenState(identity: credential, accessToken: access, expiresAt: expires, obtainedAt: obtained, refreshToken: refresh)))
            }
            return rows
        }
        return Dictionary(rows.map { ($0.state.identity, $0.state) }, uniquingKeysWith: { first, _ in first })
    }

    /// The credential's row (nil state when it holds no token yet).
    private static func select(_ credential: String, lock: Bool, on connection: PostgresConnection, logger: Logger) async throws -> SelectedRow {
        let query: PostgresQuery = lock
            ? "SELECT access_token, expires_at, obtained_at, refresh_token FROM gateway_oauth_tokens WHERE credential = \(credential) FOR UPDATE"
            : "SELECT access_token, expires_at, obtained_at, refresh_token FROM gateway_oauth_tokens WHERE credential = \(credential)"
        let rows = try await connection.query(query, logger: logger)
        for try await (access, expires, obtained, refresh) in rows.decode((String?, Double?, Double?, String?).self) {
            guard access != nil || refresh != nil else { return SelectedRow(state: nil) }
            return SelectedRow(state: OAuth2TokenState(identity: credential, accessToken: access, expiresAt: expires, obtainedAt: obtained, refreshToken: refresh))
        }
        return SelectedRow(state: nil)
    }

    private static func write(_ state: OAuth2TokenState, credential: String, replica: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE gateway_oauth_tokens SET access_token = \(state.accessToken), expires_at = \(state.expiresAt),
                obtained_at = \(state.obtainedAt), refresh_token = \(state.refreshToken),
                updated_at = clock_timestamp(), updated_by = \(replica)
            WHERE credential = \(credential)
            """,
            logger: logger
        )
    }
}

struct CommittedRow: Sendable {
    let state: OAuth2TokenState
}

/// A row read in a transaction (a struct so it can leave the connection's closure).
struct SelectedRow: Sendable {
    let state: OAuth2TokenState?
}
