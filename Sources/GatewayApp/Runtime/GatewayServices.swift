import GatewayObservability
import GatewayPolicies
import GatewaySharedState
import GatewayTracing
import GatewayUpstream
import Logging

/// Long-lived parts the routes of every config load share, whatever config
/// they were built for: they survive reloads (pooled connections, token stores,
/// retry budgets, buckets).
struct GatewayServices: Sendable {
    let pool: UpstreamPool
    let metrics: GatewayMetrics
    let logger: Logger
    /// OAuth2 token stores by upstream + credential: tokens, in-flight refreshes and backoff survive reloads.
    let tokenStores: TokenStoreRegistry
    /// Retry budgets per upstream (sliding 1 s windows); survive reloads.
    let retryBudgets = RetryBudgets()
    /// Local token buckets, upstream rate-limit holds and queue depths per upstream; survive reloads.
    let rateLimits: RateLimitRegistry
    /// Tokens and rate limits shared with other replicas (`shared_state`, read at start); nil when alone.
    let sharedState: SharedStateService?
    /// Trace writers by file (queue, drop count, rotation); survive reloads.
    let traceWriters = TraceWriterRegistry()
    /// The bound proxy address for the traces' `curl -x` line; set once the listener is bound.
    let traceProxyAddress = TraceProxyAddress()
    /// The interception CA and its leaf cache; survive reloads.
    let interceptors = InterceptorRegistry()
    /// The HAR files of `record:` by path, with their entries; survive reloads.
    let recorders = HARRecorders()
    /// The runtime switches of mocks, replay and faults, and the fault seeds drawn; survive reloads.
    let injectionSwitches = InjectionSwitches()
    /// OpenTelemetry spans and W3C trace context (`tracing`, read at start); nil while tracing is off.
    let tracing: GatewayTracer?

    init(pool: UpstreamPool, metrics: GatewayMetrics, logger: Logger, sharedState database: SharedStateDatabase?, tracing: GatewayTracer? = nil) {
        self.pool = pool
        self.metrics = metrics
        self.logger = logger
        self.tracing = tracing
        let tokenStores = TokenStoreRegistry(shared: database.map { PostgresTokenCoordinator(database: $0) })
        let rateLimits = RateLimitRegistry(shared: database.map { PostgresRateLimits(database: $0) })
        self.tokenStores = tokenStores
        self.rateLimits = rateLimits
        self.sharedState = database.map { database in
            SharedStateService(
                database: database, rateLimitRegistry: rateLimits, tokenStores: tokenStores,
                availabilityChanged: { metrics.setSharedStateUp($0) }, logger: logger
            )
        }
    }
}
