import GatewayCore

/// `shared_state`: state several gateway replicas share. Absent, each gateway
/// keeps its tokens in `state_dir` and its rate limits in memory, as always.
public struct SharedStateConfig: Sendable, Equatable {
    /// `shared_state.postgres`: the database the replicas share.
    public var postgres: PostgresStateConfig

    public init(postgres: PostgresStateConfig) {
        self.postgres = postgres
    }
}

/// `shared_state.postgres`: OAuth2 token state and rate limits in PostgreSQL.
public struct PostgresStateConfig: Sendable, Equatable {
    /// What a credential or limiter does while the database cannot be reached.
    public enum OnUnavailable: String, Sendable, Equatable, CaseIterable {
        /// Behave like a lone gateway (local refresh, local buckets), and
        /// reconcile rotated tokens with the database when it is back.
        case local
        /// Refuse what needs the database (a token refresh, a rate-limited
        /// request) with 503 `shared_state_unavailable`.
        case fail
    }

    /// `tls`: how the connection to the database is protected.
    public enum TLSMode: String, Sendable, Equatable, CaseIterable {
        /// Plain TCP (a database on loopback or a private network).
        case disable
        /// TLS, certificate verified against the system roots (or `ca_file`) and the host name.
        case verifyFull = "verify-full"
        /// TLS, certificate not verified (encryption without authentication).
        case require
    }

    /// `url` (`url_env`, `url_file`): `postgres://user:password@host:port/database`.
    public var url: Secret
    /// The parts of `url` (parsed and checked at load).
    public var endpoint: PostgresURL
    /// `tls`; default: the URL's `sslmode` (`disable`, `require`, `verify-full`), else `disable`.
    public var tls: TLSMode
    /// `ca_file`: PEM roots for `verify-full` instead of the system's.
    public var caFile: String?
    /// `on_unavailable`: `local` (default) or `fail`.
    public var onUnavailable: OnUnavailable
    /// `connect_timeout`: a database operation waits at most this for a connection.
    public var connectTimeout: Duration
    /// `query_timeout`: a database operation waits at most this for an answer;
    /// past it the connection is closed and the database counts as unavailable.
    public var queryTimeout: Duration
    /// `max_connections`: connections to the database per gateway.
    public var maxConnections: Int
    /// `rate_limit_lease`: each gateway takes this much of a shared bucket's
    /// rate at once (at least one token), so most requests need no round trip.
    /// Bounds the overshoot: at most one lease per replica beyond the bucket.
    public var rateLimitLease: Duration
    /// `sync_interval`: how often a gateway reads the upstream pauses other
    /// replicas saw, and checks that the database answers.
    public var syncInterval: Duration

    public static let defaultConnectTimeout: Duration = .seconds(2)
    public static let defaultQueryTimeout: Duration = .seconds(5)
    public static let defaultMaxConnections = 4
    public static let defaultRateLimitLease: Duration = .milliseconds(100)
    public static let defaultSyncInterval: Duration = .milliseconds(250)

    public init(
        url: Secret,
        endpoint: PostgresURL,
        tls: TLSMode? = nil,
        caFile: String? = nil,
        onUnavailable: OnUnavailable = .local,
        connectTimeout: Duration = PostgresStateConfig.defaultConnectTimeout,
        queryTimeout: Duration = PostgresStateConfig.defaultQueryTimeout,
        maxConnections: Int = PostgresStateConfig.defaultMaxConnections,
        rateLimitLease: Duration = PostgresStateConfig.defaultRateLimitLease,
        syncInterval: Duration = PostgresStateConfig.defaultSyncInterval
    ) {
        self.url = url
        self.endpoint = endpoint
        self.tls = tls ?? endpoint.sslMode ?? .disable
        self.caFile = caFile
        self.onUnavailable = onUnavailable
        self.connectTimeout = connectTimeout
        self.queryTimeout = queryTimeout
        self.maxConnections = maxConnections
        self.rateLimitLease = rateLimitLease
        self.syncInterval = syncInterval
    }

    /// Tokens one lease takes from a bucket of `rate` per second and `burst`:
    /// `rate × rate_limit_lease`, at least 1, at most `burst`.
    public func leaseSize(rate: Double, burst: Int) -> Int {
        let tokens = Int((rate * rateLimitLease.seconds).rounded(.down))
        return Swift.max(1, Swift.min(Swift.max(1, burst), tokens))
    }
}
