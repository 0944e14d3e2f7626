public import GatewayConfig
import GatewayPolicies
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
public import PostgresNIO

/// The connection pool to the database the replicas share, and whether it
/// answered lately (``SharedStateHealth``). Every operation waits at most
/// `connect_timeout` for a connection; past that, or on any error before it
/// changed something, it throws ``SharedStateUnavailable``.
public final class SharedStateDatabase: Sendable {
    public let config: PostgresStateConfig
    public let health: SharedStateHealth
    let client: PostgresClient
    let logger: Logger
    let eventLoopGroup: any EventLoopGroup
    /// The last ``connectFailureReason()`` and when it was learned.
    let lastDiagnosis = NIOLockedValueBox<(at: ContinuousClock.Instant, reason: String?)?>(nil)
    /// Names this process in the rows it writes (`updated_by`): host and pid.
    public let replicaID: String
    /// The pause last written per authority: a burst of 429s writes it once.
    private let publishedHolds = NIOLockedValueBox<[String: ContinuousClock.Instant]>([:])

    public init(config: PostgresStateConfig, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, logger: Logger) {
        self.config = config
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
        self.health = SharedStateHealth()
        self.replicaID = SharedStateDatabase.makeReplicaID()
        self.client = PostgresClient(configuration: Self.clientConfiguration(config), eventLoopGroup: eventLoopGroup, backgroundLogger: Self.quiet(logger))
    }

    /// The pool's own background logging only above `warning`: connection
    /// failures are reported once a minute by ``SharedStateService`` instead.
    private static func quiet(_ logger: Logger) -> Logger {
        var quiet = logger
        quiet.logLevel = max(logger.logLevel, .error)
        return quiet
    }

    static func clientConfiguration(_ config: PostgresStateConfig) -> PostgresClient.Configuration {
        let endpoint = config.endpoint
        let tls: PostgresClient.Configuration.TLS = tlsConfiguration(config).map { .require($0) } ?? .disable
        var configuration = PostgresClient.Configuration(
            host: endpoint.host, port: endpoint.port, username: endpoint.username,
            password: endpoint.password, database: endpoint.database, tls: tls
        )
        configuration.options.connectTimeout = config.connectTimeout
        configuration.options.maximumConnections = config.maxConnections
        configuration.options.minimumConnections = 0
        configuration.options.additionalStartupParameters = [("application_name", "gateway")]
        return configuration
    }

    /// The TLS settings of `tls` (`require`: encrypted, any certificate;
    /// `verify-full`: the chain and the name checked); nil for `disable`.
    static func tlsConfiguration(_ config: PostgresStateConfig) -> TLSConfiguration? {
        switch config.tls {
        case .disable:
            return nil
        case .require:
            var tlsConfig = TLSConfiguration.makeClientConfiguration()
            tlsConfig.certificateVerification = .none
            return tlsConfig
        case .verifyFull:
            var tlsConfig = TLSConfiguration.makeClientConfiguration()
            tlsConfig.certificateVerification = .fullVerification
            if let caFile = config.caFile { tlsConfig.trustRoots = .file(caFile) }
            return tlsConfig
        }
    }

    private static func makeReplicaID() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        return "\(host):\(getpid())"
    }

    /// Whether a pause of `authority` until `until` is news (nothing as long
    /// was written by this process); records it. Bounded: ended pauses are
    /// forgotten when more than 1024 are remembered.
    func claimHoldPublication(authority: String, until: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        return publishedHolds.withLockedValue { holds in
            if let published = holds[authority], published >= until - .milliseconds(100) { return false }
            if holds.count >= 1024 { holds = holds.filter { $0.value > now } }
            holds[authority] = until
            return true
        }
    }

    /// Runs the pool until the task is cancelled (see `PostgresClient.run()`).
    public func run() async {
        await client.run()
    }

    /// Creates or updates the tables (see ``SharedStateSchema``); returns the schema version.
    public func migrate() async throws -> Int {
        let logger = self.logger
        let version = try await withConnection("create tables", requiresSchema: false) { session in
            try await SharedStateSchema.migrate(session, logger: logger)
        }
        health.markMigrated()
        return version
    }

    /// The server's version (`SHOW server_version`), for `check-config`.
    public func serverVersion() async throws -> String {
        let logger = self.logger
        return try await withConnection("read server version", requiresSchema: false) { session in
            for try await version in try await session.connection.query("SHOW server_version", logger: logger).decode(String.self) {
                return version
            }
            return "unknown"
        }
    }

    /// Runs `body` on a pooled connection, watched (``DatabaseSession``):
    /// waiting for the connection longer than `connect_timeout`, or for an
    /// answer longer than `query_timeout`, throws ``SharedStateUnavailable``
    /// (and so does a failure of `body` that is not a ``PassThroughError``).
    func withConnection<Result: Sendable>(
        _ what: String,
        requiresSchema: Bool = true,
        _ body: @escaping @Sendable (DatabaseSession) async throws -> Result
    ) async throws -> Result {
        if requiresSchema, !health.isMigrated {
            throw SharedStateUnavailable("\(what): the schema is not created yet")
        }
        let acquired = NIOLockedValueBox(false)
        let timeout = config.connectTimeout
        let queryTimeout = config.queryTimeout
        let unanswered = "\(what): no answer within \(ConfigUnits.formatDuration(queryTimeout)) (query_timeout)"
        // The watch ran out while `body` could still give a result (it handled the failed statement).
        let expiredQuietly = NIOLockedValueBox(false)
        let client = self.client
        do {
            return try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        acquired.withLockedValue { $0 = true }
                        let session = DatabaseSession(connection: connection, limit: queryTimeout)
                        session.allow()
                        defer { session.stop() }
                        do {
                            let result = try await body(session)
                            if await session.settled() { expiredQuietly.withLockedValue { $0 = true } }
                            return result
                        } catch let error as PassThroughError {
                            if await session.settled() { expiredQuietly.withLockedValue { $0 = true } }
                            throw error
                        } catch {
                            throw await session.settled() ? SharedStateUnavailable(unanswered) : error
                        }
                    }
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    if acquired.withLockedValue({ $0 }) { return nil }
                    // The pool retries a refused login until the timeout: say why it was refused.
                    let cause = await self.connectFailureReason().map { ": \($0)" } ?? ""
                    throw SharedStateUnavailable("no database connection within \(timeout)\(cause)")
                }
                while let result = try await group.next() {
                    if let result {
                        group.cancelAll()
                        recordAnswered(expired: expiredQuietly.withLockedValue { $0 }, unanswered)
                        return result
                    }
                }
                throw SharedStateUnavailable("\(what): no result")
            }
        } catch let error as SharedStateUnavailable {
            health.recordFailure(error.reason)
            throw error
        } catch let error as PassThroughError {
            recordAnswered(expired: expiredQuietly.withLockedValue { $0 }, unanswered)
            throw error.error
        } catch {
            let reason = Self.describe(error)
            health.recordFailure(reason)
            throw SharedStateUnavailable("\(what): \(reason)")
        }
    }

    /// An operation gave its result: the database answered, unless a statement
    /// of it went unanswered (`query_timeout`) and the operation carried on without it.
    private func recordAnswered(expired: Bool, _ unanswered: String) {
        if expired { health.recordFailure(unanswered) } else { health.recordSuccess() }
    }

    /// The SQLSTATE code of an error the server answered with.
    static func sqlState(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// A short description of a database error: the server's message (never
    /// the URL), or the error's type.
    static func describe(_ error: any Error) -> String {
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] { return "server: \(message)" }
            return "\(psql.code)"
        }
        return String(describing: type(of: error))
    }
}

/// An error of the caller's own code inside ``SharedStateDatabase/withConnection(_:_:)``
/// (a token call), rethrown unchanged instead of being read as the database's failure.
struct PassThroughError: Error {
    let error: any Error
}
