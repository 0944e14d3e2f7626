public import GatewayConfig
public import GatewayCore
import NIOHTTP1

/// OAuth2 for upstreams with `auth: { type: oauth2 }`: puts the upstream's
/// access token on each request (`Authorization: Bearer`), getting or
/// refreshing it first when it is missing or about to expire; when the upstream
/// answers 401 anyway, gets a new token (one refresh per credential however
/// many requests were rejected at once, see ``TokenStore``) and sends the
/// request once more with it.
///
/// The retry sends the request again, so it follows the retry policy's
/// safety rules: only an idempotent method, or a request with
/// `Idempotency-Key` (or an upstream with `retry.retry_non_idempotent`), and
/// only with a body the exchange holds all of: it keeps a copy as the body
/// goes to the first attempt, up to `replayLimit` (1 MiB; or the retry's
/// `buffer_limit` when larger). Any other request
/// gets the upstream's 401 back as it is; the token is still replaced (at most
/// once per token value) so the client's next request carries a new one. A failed refresh becomes 401 with
/// `X-Gateway-Error: token_refresh_failed` (thrown as ``GatewayError``).
///
/// One policy per OAuth2 upstream, built with that upstream's route; its
/// attempt step (``TokenRefreshStep``) applies it on the event loop. Passed untouched: with `client_auth: keep`, requests
/// carrying their own `Authorization`; and requests outside the
/// credential's scope (``CredentialScope``: plain http without an `http://`
/// origin, another port, a `TRACE`): those are forwarded without a token.
public struct TokenRefreshPolicy: Sendable {
    struct Binding: Sendable {
        let store: TokenStore
        let clientAuth: ClientAuthMode
        let scope: CredentialScope
        /// The upstream's `retry.retry_non_idempotent`: replay a 401'd POST too.
        let retryNonIdempotent: Bool
    }

    /// Largest request body buffered so it can be sent again after a 401.
    public static let defaultReplayLimit = 1024 * 1024
    /// The upstream's credential settings, bound when its route is built.
    let binding: Binding
    let replayLimit: Int

    /// The policy for one upstream's credential: its token store, `client_auth`,
    /// scope, and whether a 401'd non-idempotent request may be replayed.
    public init(
        store: TokenStore,
        clientAuth: ClientAuthMode = .replace,
        scope: CredentialScope,
        retryNonIdempotent: Bool = false,
        replayLimit: Int = TokenRefreshPolicy.defaultReplayLimit
    ) {
        self.binding = Binding(store: store, clientAuth: clientAuth, scope: scope, retryNonIdempotent: retryNonIdempotent)
        self.replayLimit = replayLimit
    }

    /// The policy of `upstream`, or nil when it does not use OAuth2 (no
    /// `store`): its route has no token step. Built once per config load.
    /// - Parameter store: the upstream's, from ``TokenStoreRegistry/stores(for:transport:events:logger:)``.
    public init?(upstream: UpstreamConfig, store: TokenStore?, replayLimit: Int = TokenRefreshPolicy.defaultReplayLimit) {
        guard let auth = upstream.auth, case .oauth2 = auth.kind, let store else { return nil }
        self.init(
            store: store, clientAuth: auth.clientAuth, scope: upstream.credentialScope,
            retryNonIdempotent: upstream.retry?.retryNonIdempotent ?? false, replayLimit: replayLimit
        )
    }

    /// The upstream this policy is bound to.
    public var upstream: String { binding.store.upstream }

    /// Whether `request` would get its upstream's access token: it is within
    /// the credential's scope, and it is not a `TRACE`. Synchronous, the same
    /// rule as ``AuthInjectionPolicy/isInScope(_:)``.
    public func isInScope(_ request: ProxyRequest) -> Bool {
        CredentialScope.mayCarryCredential(request) && binding.scope.permits(request)
    }
}
