import GatewayCore
public import GatewayPolicies
public import Logging
public import ServiceLifecycle

/// Runs the shared state of a gateway: the database pool, the tables (created
/// on start, retried until the database answers), and a sync every
/// `sync_interval` that reads the upstream pauses other replicas saw and
/// checks that the database answers. While it does not, that is logged once
/// a minute and reported (`/readyz`, `gateway_shared_state_up`); when it
/// answers again, tokens obtained meanwhile are written to it.
public final class SharedStateService: Service, Sendable {
    public let database: SharedStateDatabase
    public let rateLimits: PostgresRateLimits
    public let tokens: PostgresTokenCoordinator
    private let rateLimitRegistry: RateLimitRegistry
    private let tokenStores: TokenStoreRegistry
    private let availabilityChanged: @Sendable (Bool) -> Void
    private let logger: Logger

    public static let unavailableLogInterval: Duration = .seconds(60)
    /// How often ended upstream pauses and long-full rate buckets are deleted from the shared tables.
    static let pruneInterval: Duration = .seconds(60)

    public init(
        database: SharedStateDatabase,
        rateLimitRegistry: RateLimitRegistry,
        tokenStores: TokenStoreRegistry,
        availabilityChanged: @escaping @Sendable (Bool) -> Void = { _ in },
        logger: Logger
    ) {
        self.database = database
        self.rateLimits = PostgresRateLimits(database: database)
        self.tokens = PostgresTokenCoordinator(database: database)
        self.rateLimitRegistry = rateLimitRegistry
        self.tokenStores = tokenStores
        self.availabilityChanged = availabilityChanged
        self.logger = logger
    }

    public func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.database.run() }
            // Until the gateway shuts down; then the pool stops with it.
            await cancelWhenGracefulShutdown { await self.syncLoop() }
            group.cancelAll()
        }
    }

    private func syncLoop() async {
        var reportedUp = false
        var lastUnavailableLog: ContinuousClock.Instant?
        var lastPrune = ContinuousClock.now
        let endpoint = database.config.endpoint.description
        while !Task.isCancelled {
            do {
                if !database.health.isMigrated {
                    let version = try await database.migrate()
                    logger.info("shared state ready", metadata: ["database": "\(endpoint)", "schema_version": "\(version)"])
                }
                try await sync()
                // Expired pauses and long-full buckets leave their tables about once a minute, whatever `sync_interval` is.
                if ContinuousClock.now - lastPrune >= Self.pruneInterval {
                    lastPrune = ContinuousClock.now
                    try? await rateLimits.prune()
                }
                // A token kept locally (a commit that failed, an outage shorter than a
                // sync) goes to the database as soon as it answers, not only after an outage seen here.
                await tokenStores.reconcilePending()
                if !reportedUp {
                    reportedUp = true
                    availabilityChanged(true)
                    if lastUnavailableLog != nil {
                        logger.notice("shared state database available again", metadata: ["database": "\(endpoint)"])
                        lastUnavailableLog = nil
                    }
                }
            } catch {
                if reportedUp || lastUnavailableLog == nil {
                    reportedUp = false
                    availabilityChanged(false)
                }
                let now = ContinuousClock.now
                if lastUnavailableLog.map({ now - $0 >= Self.unavailableLogInterval }) ?? true {
                    lastUnavailableLog = now
                    logger.warning(
                        "shared state database unavailable",
                        metadata: [
                            "database": "\(endpoint)", "reason": "\(database.health.current.lastError ?? "\(error)")",
                            "on_unavailable": "\(database.config.onUnavailable.rawValue)",
                        ]
                    )
                }
            }
            try? await Task.sleep(for: database.config.syncInterval)
        }
    }

    /// Applies the pauses other replicas saw to this gateway's holds, and the
    /// tokens they committed to its token stores.
    private func sync() async throws {
        await tokenStores.adoptCommitted(try await tokens.allCommittedStates())
        let holds = try await rateLimits.currentHolds()
        let now = ContinuousClock.now
        for hold in holds where hold.remaining > .zero {
            rateLimitRegistry.extendHold(authority: hold.authority, until: now + hold.remaining, now: now)
        }
    }
}
