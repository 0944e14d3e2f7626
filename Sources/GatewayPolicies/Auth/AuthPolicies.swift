public import GatewayConfig
public import GatewayCore
public import Logging

/// The auth policies of a config, in chain order: token refresh (OAuth2), then
/// static credential injection. Policies with nothing to do are left out.
public enum AuthPolicies {
    /// - Parameters:
    ///   - tokenStores: long-lived (survives reloads), from the gateway's services.
    ///   - transport: where token endpoint calls go (the upstream pool).
    public static func make(
        config: GatewayConfig,
        tokenStores: TokenStoreRegistry,
        transport: any ProxyHandler,
        events: any GatewayEvents,
        logger: Logger
    ) -> [any GatewayPolicy] {
        var policies: [any GatewayPolicy] = []
        let stores = tokenStores.stores(for: config, transport: transport, events: events, logger: logger)
        let refresh = TokenRefreshPolicy(config: config, stores: stores)
        if !refresh.isEmpty { policies.append(refresh) }
        let inject = AuthInjectionPolicy(config: config)
        if !inject.isEmpty { policies.append(inject) }
        return policies
    }
}
