public import GatewayConfig
public import GatewayCore

/// Adds the configured `bearer`, `header`, `basic` or `query` credential to
/// requests of its upstream, and only those: a request's `upstreamName` is set
/// by the router when its target host matches the upstream's `hosts` (the
/// client's `Host` header plays no part: the router replaces it from the
/// target), and `CONNECT` tunnels never reach the policy chain. Requests of
/// other upstreams, or of none, pass untouched.
///
/// The credential is scoped to an origin (``CredentialScope``): over TLS to
/// the upstream's hosts on port 443 (or its `ports`), or to its `origin`. A
/// request outside that scope, and any `TRACE`, is forwarded without it.
///
/// The whole decision is the synchronous ``inject(into:)``, so an event-loop
/// fast path can call it without suspending; ``handle(_:context:next:)`` calls it too.
///
/// `oauth2` credentials are handled by ``TokenRefreshPolicy``.
public struct AuthInjectionPolicy: GatewayPolicy {
    struct Binding: Sendable {
        let credential: StaticCredential
        let scope: CredentialScope
    }

    private let bindings: [String: Binding]

    /// The static credentials of `config`'s upstreams.
    public init(config: GatewayConfig) {
        var bindings: [String: Binding] = [:]
        for upstream in config.upstreams {
            if let auth = upstream.auth, let credential = StaticCredential(auth) {
                bindings[upstream.name] = Binding(credential: credential, scope: upstream.credentialScope)
            }
        }
        self.bindings = bindings
    }

    /// Credentials by upstream name (oauth2 entries are ignored), all in `scope`.
    public init(credentials: [String: AuthConfig], scope: CredentialScope = .anyHostOverTLS) {
        self.bindings = credentials.compactMapValues { auth in
            StaticCredential(auth).map { Binding(credential: $0, scope: scope) }
        }
    }

    /// True when no upstream has a static credential (the policy can be left out).
    public var isEmpty: Bool { bindings.isEmpty }

    /// Whether `request` would get its upstream's credential: it has one, the
    /// request is within its scope, and it is not a `TRACE`.
    public func isInScope(_ request: ProxyRequest) -> Bool {
        guard let name = request.upstreamName, let binding = bindings[name] else { return false }
        return CredentialScope.mayCarryCredential(request) && binding.scope.permits(request)
    }

    /// Adds the credential when ``isInScope(_:)``; otherwise leaves `request` as it is.
    /// Synchronous and non-blocking: safe on an event loop.
    public func inject(into request: inout ProxyRequest) {
        guard let name = request.upstreamName, let binding = bindings[name],
            CredentialScope.mayCarryCredential(request), binding.scope.permits(request)
        else { return }
        binding.credential.apply(to: &request)
    }

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        var request = request
        inject(into: &request)
        return try await next.handle(request, context: context)
    }
}
