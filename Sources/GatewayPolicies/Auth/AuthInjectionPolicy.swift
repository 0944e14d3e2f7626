public import GatewayConfig
public import GatewayCore

/// Adds the configured `bearer`, `header`, `basic` or `query` credential to
/// requests of its upstream, and only those: a request's `upstreamName` is set
/// by the router when its target host matches the upstream's `hosts` (the
/// client's `Host` header plays no part), and `CONNECT` tunnels never reach the
/// policy chain. Requests of other upstreams, or of none, pass untouched.
///
/// `oauth2` credentials are handled by ``TokenRefreshPolicy``.
public struct AuthInjectionPolicy: GatewayPolicy {
    let credentials: [String: StaticCredential]

    /// The static credentials of `config`'s upstreams.
    public init(config: GatewayConfig) {
        var credentials: [String: StaticCredential] = [:]
        for upstream in config.upstreams {
            if let auth = upstream.auth, let credential = StaticCredential(auth) {
                credentials[upstream.name] = credential
            }
        }
        self.credentials = credentials
    }

    /// Credentials by upstream name (oauth2 entries are ignored).
    public init(credentials: [String: AuthConfig]) {
        self.credentials = credentials.compactMapValues(StaticCredential.init)
    }

    /// True when no upstream has a static credential (the policy can be left out).
    public var isEmpty: Bool { credentials.isEmpty }

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        guard let name = request.upstreamName, let credential = credentials[name] else {
            return try await next.handle(request, context: context)
        }
        var request = request
        credential.apply(to: &request)
        return try await next.handle(request, context: context)
    }
}
