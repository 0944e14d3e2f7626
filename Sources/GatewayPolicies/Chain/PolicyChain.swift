public import GatewayCore

/// Policies folded around a terminal handler (the upstream pool), outermost
/// first: `PolicyChain(policies: [trace, metrics, retry], terminal: pool)` runs
/// trace → metrics → retry → pool. The order is defined in one place, by the
/// caller that builds the chain.
///
/// The gateway builds one chain per upstream when a config loads or reloads,
/// each policy already bound to that upstream's settings; a policy the
/// upstream does not configure is simply not in its chain.
public struct PolicyChain: ProxyHandler {
    private let first: any ProxyHandler
    /// The policies, outermost first (what the chain was built with).
    public let policies: [any GatewayPolicy]

    public init(policies: [any GatewayPolicy], terminal: any ProxyHandler) {
        self.policies = policies
        var next = terminal
        for policy in policies.reversed() {
            next = PolicyLink(policy: policy, next: next)
        }
        first = next
    }

    public func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        try await first.handle(request, context: context)
    }
}

/// One policy bound to the rest of the chain.
struct PolicyLink: ProxyHandler {
    let policy: any GatewayPolicy
    let next: any ProxyHandler

    func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        try await policy.handle(request, context: context, next: next)
    }
}
