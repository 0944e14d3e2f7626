public import GatewayConfig
public import GatewayCore

/// Adds the configured `bearer`, `header`, `basic` or `query` credential to
/// requests of its upstream, and only those: one policy per upstream with a
/// static credential, built with that upstream's route (when the config loads
/// or reloads) and placed in its attempt steps only. A request's
/// route is chosen by its `upstreamName`, which the router sets when the
/// target host matches the upstream's `hosts` (the client's `Host` header
/// plays no part: the router replaces it from the target); `CONNECT` tunnels
/// never reach a route. Requests of other upstreams, or of none, take routes
/// without this policy.
///
/// The credential is scoped to an origin (``CredentialScope``): over TLS to
/// the upstream's hosts on port 443 (or its `ports`), or to its `origin`. A
/// request outside that scope, and any `TRACE`, is forwarded without it.
///
/// The whole decision is the synchronous ``inject(into:)``, which its attempt
/// step calls on the event loop.
///
/// `oauth2` credentials are handled by ``TokenRefreshPolicy``.
public struct AuthInjectionPolicy: Sendable {
    let credential: StaticCredential
    /// Where the credential may go.
    public let scope: CredentialScope

    /// The static credential of `upstream`, or nil when it has none (no `auth`,
    /// or `oauth2`): its route has no credential step.
    public init?(upstream: UpstreamConfig) {
        guard let auth = upstream.auth else { return nil }
        self.init(auth: auth, scope: upstream.credentialScope)
    }

    /// A static credential in `scope` (nil for `oauth2`).
    public init?(auth: AuthConfig, scope: CredentialScope = .anyHostOverTLS) {
        guard let credential = StaticCredential(auth) else { return nil }
        self.credential = credential
        self.scope = scope
    }

    /// Whether `request` would get the credential: it is within its scope,
    /// and it is not a `TRACE`.
    public func isInScope(_ request: ProxyRequest) -> Bool {
        CredentialScope.mayCarryCredential(request) && scope.permits(request)
    }

    /// Adds the credential when ``isInScope(_:)``; otherwise leaves `request` as it is.
    /// Synchronous and non-blocking: safe on an event loop.
    public func inject(into request: inout ProxyRequest) {
        guard isInScope(request) else { return }
        credential.apply(to: &request)
    }
}
