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
/// only with a body buffered before the first attempt, up to `replayLimit`
/// (1 MiB; `ReplayableBody`, shared with the retry policy). Any other request
/// gets the upstream's 401 back as it is; the token is still replaced (at most
/// once per token value) so the client's next request carries a new one. A failed refresh becomes 401 with
/// `X-Gateway-Error: token_refresh_failed` (thrown as ``GatewayError``).
///
/// One policy per OAuth2 upstream, built with that upstream's route and in
/// its chain only. Passed untouched: with `client_auth: keep`, requests
/// carrying their own `Authorization`; and requests outside the
/// credential's scope (``CredentialScope``: plain http without an `http://`
/// origin, another port, a `TRACE`): those are forwarded without a token.
public struct TokenRefreshPolicy: GatewayPolicy {
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
    /// `store`): its chain leaves the policy out. Built once per config load.
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

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        guard isInScope(request) else {
            return try await next.handle(request, context: context)
        }
        if binding.clientAuth == .keep, request.headers.contains(name: "Authorization") {
            return try await next.handle(request, context: context)
        }
        var request = request
        // Replayed after a 401 only what the retry rules would replay: an
        // idempotent method or `Idempotency-Key` (or `retry_non_idempotent`),
        // and a body buffered within `replayLimit`. Others are not buffered at all.
        var replayable = false
        if RetryPolicy.isSafeToRetry(request, retryNonIdempotent: binding.retryNonIdempotent) {
            let prepared = try await ReplayableBody.prepare(request.body, limit: replayLimit)
            request.body = prepared.body
            replayable = prepared.replayable
        }

        let token: AccessToken
        do {
            token = try await binding.store.accessToken()
        } catch var error as GatewayError {
            error.upstream = request.hostPort  // host:port, as in every gateway error
            throw error
        }
        request.headers.replaceOrAdd(name: "Authorization", value: token.authorizationValue)
        let response = try await next.handle(request, context: context)
        guard response.status == .unauthorized else { return response }

        guard replayable else {
            // The 401 goes back as it is; the token is still replaced (once per
            // token value, see TokenStore) so the client's next request carries a new one.
            _ = try? await binding.store.accessToken(replacing: token)
            return response
        }
        let fresh: AccessToken?
        do {
            fresh = try await binding.store.accessToken(replacing: token)
        } catch {
            await Self.release(response)
            guard var error = error as? GatewayError else { throw error }
            error.upstream = request.hostPort
            throw error
        }
        guard let fresh, fresh != token else { return response }
        await Self.release(response)
        context.logger.debug("upstream answered 401; retrying once with a new access token", metadata: ["upstream": "\(upstream)"])
        request.headers.replaceOrAdd(name: "Authorization", value: fresh.authorizationValue)
        return try await next.handle(request, context: context)
    }

    /// Reads a small 401 body to the end (so the connection can be reused), or
    /// gives it up (closing the connection) when it is large or broken.
    private static func release(_ response: ProxyResponse) async {
        _ = try? await response.body.collect(upTo: 64 * 1024)
    }
}
