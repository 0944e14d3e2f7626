import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayPolicies
import GatewaySharedState
import GatewayUpstream
import Logging

/// The one place that defines the order of the policies, and the route each
/// upstream gets (built when a config loads or reloads).
///
/// Per client request, outermost first: trace → metrics (observers, on the
/// event loop) → retry. Per upstream attempt (inside retry): rate limit →
/// token refresh → auth injection. Then the upstream pool.
///
/// The direct path runs all of it on the client connection's event loop:
/// observers, the retry planner, the rate-limit, token and credential steps
/// (each given its upstream's settings when the route is built), then the
/// pool; it waits only when a policy must (a backoff, a pause, a queue slot,
/// a token refresh). A body that may be sent twice (retried, or replayed after
/// a 401) is copied as it goes to the first attempt, within the limits the
/// retry planner and the steps give.
///
/// Each upstream's policies are built here once per config load, bound to
/// that upstream's settings (its `retry`, `rate_limit`, credential): nothing
/// on the request path looks the config up by upstream name, and a policy
/// the upstream does not configure is not in its route.
enum PolicyChainFactory {
    static func routes(config: GatewayConfig, services: GatewayServices) -> RouteTable {
        var observers: [any ExchangeObserver] = []
        if config.debug { observers.append(TracePolicy.make(config: config, writers: services.traceWriters, boundProxy: services.traceProxyAddress, logger: services.logger)) }
        observers.append(MetricsPolicy(metrics: services.metrics, config: config))

        let stores = services.tokenStores.stores(for: config, transport: services.pool, events: services.metrics, logger: services.logger)
        var byUpstream: [String: UpstreamRoute] = [:]
        for upstream in config.upstreams where byUpstream[upstream.name] == nil {
            byUpstream[upstream.name] = route(for: upstream, observers: observers, tokenStore: stores[upstream.name], services: services)
        }
        return RouteTable(byUpstream: byUpstream, unconfigured: UpstreamRoute(observers: observers))
    }

    /// One upstream's route: its policies in chain order, the same policies as
    /// the direct path's retry planner and attempt steps.
    static func route(for upstream: UpstreamConfig, observers: [any ExchangeObserver], tokenStore: TokenStore?, services: GatewayServices) -> UpstreamRoute {
        let retry = RetryPolicy(upstream: upstream, budgets: services.retryBudgets, events: services.metrics)
        let rateLimit = RateLimitPolicy(upstream: upstream, registry: services.rateLimits, events: services.metrics)
        let tokenRefresh = TokenRefreshPolicy(upstream: upstream, store: tokenStore)
        let inject = AuthInjectionPolicy(upstream: upstream)

        // Per client request: retry. Per attempt: rate limit → token refresh → auth injection.
        let steps: [(any AttemptStep)?] = [rateLimit?.step, tokenRefresh?.step, inject]
        return UpstreamRoute(observers: observers, steps: steps.compactMap { $0 }, retry: retry?.planner)
    }
}
