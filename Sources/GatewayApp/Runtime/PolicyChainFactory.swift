import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayPolicies
import GatewayUpstream
import Logging

/// Long-lived parts every chain shares, whatever config it was built for: they
/// survive reloads (pooled connections, token stores, retry budgets, buckets).
struct GatewayServices: Sendable {
    let pool: UpstreamPool
    let metrics: GatewayMetrics
    let logger: Logger
    /// OAuth2 token stores by upstream + credential: tokens, in-flight refreshes and backoff survive reloads.
    let tokenStores = TokenStoreRegistry()
    /// Retry budgets per upstream (sliding 1 s windows); survive reloads.
    let retryBudgets = RetryBudgets()
    /// Local token buckets, upstream rate-limit holds and queue depths per upstream; survive reloads.
    let rateLimits = RateLimitRegistry()
    /// Trace writers by file (queue, drop count, rotation); survive reloads.
    let traceWriters = TraceWriterRegistry()
    /// The bound proxy address for the traces' `curl -x` line; set once the listener is bound.
    let traceProxyAddress = TraceProxyAddress()
    /// The interception CA and its leaf cache; survive reloads.
    let interceptors = InterceptorRegistry()
}

/// The one place that defines the order of the policies.
///
/// Per client request, outermost first: trace → metrics → retry.
/// Per upstream attempt (inside retry): rate limit → token refresh → auth injection.
/// Then the upstream pool. A policy that does not apply to a request's upstream
/// passes it on untouched.
enum PolicyChainFactory {
    static func make(config: GatewayConfig, services: GatewayServices) -> any ProxyHandler {
        var policies: [any GatewayPolicy] = []
        // Per client request.
        if config.debug { policies.append(TracePolicy.make(config: config, writers: services.traceWriters, boundProxy: services.traceProxyAddress, logger: services.logger)) }
        policies.append(MetricsPolicy(metrics: services.metrics, config: config))
        // Policies no upstream configures are left out: nothing to do per request.
        let retry = RetryPolicy(upstreams: config.upstreams, budgets: services.retryBudgets, events: services.metrics)
        if !retry.isEmpty { policies.append(retry) }
        // Per upstream attempt.
        let rateLimit = RateLimitPolicy(upstreams: config.upstreams, registry: services.rateLimits, events: services.metrics)
        if !rateLimit.isEmpty { policies.append(rateLimit) }
        policies += AuthPolicies.make(config: config, tokenStores: services.tokenStores, transport: services.pool, events: services.metrics, logger: services.logger)
        return PolicyChain(policies: policies, terminal: services.pool)
    }
}
