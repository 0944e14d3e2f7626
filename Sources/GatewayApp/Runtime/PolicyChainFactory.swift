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
        // (trace: debug traces issue)
        // (metrics: metrics issue)
        // (retry: retries issue)
        // Per upstream attempt.
        // (rate limit: retries issue)
        // (token refresh + auth injection: auth issue)
        _ = config
        policies.reserveCapacity(6)
        return PolicyChain(policies: policies, terminal: services.pool)
    }
}
