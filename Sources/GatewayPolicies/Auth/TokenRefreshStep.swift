import GatewayConfig
public import GatewayCore
import NIOCore
import NIOHTTP1

/// OAuth2 on the event loop, for one upstream: the rules of
/// ``TokenRefreshPolicy``, decided on the event loop. The current token is
/// read from the store's snapshot (a lock held for nanoseconds, no actor hop);
/// a request waits only while a token is obtained (none yet, or due for
/// refresh), for the one refresh every waiting request shares.
///
/// After a 401 to its token, a request without a body that the retry rules
/// would replay (idempotent method, `Idempotency-Key`, or
/// `retry_non_idempotent`) is sent once more with a new token; any other gets
/// the 401 as it is, and the token is still replaced (at most once per token
/// value) for the client's next request. Such a request with a body is
/// replayed too when the exchange holds all of it: it keeps a copy of a body up
/// to `replayLimit` bytes (``replayLimit(for:)``; or `retry.buffer_limit`
/// when larger and the request may be retried).
struct TokenRefreshStep: AttemptStep {
    let binding: TokenRefreshPolicy.Binding
    /// The largest body kept so that it can be replayed after a 401.
    let replayLimit: Int

    /// Whether the token goes on `request`: in the credential's scope, not a
    /// `TRACE`, and (with `client_auth: keep`) no `Authorization` of the client's.
    private func carriesToken(_ request: ProxyRequest) -> Bool {
        guard CredentialScope.mayCarryCredential(request), binding.scope.permits(request) else { return false }
        return binding.clientAuth != .keep || !request.headers.contains(name: "Authorization")
    }

    private func isReplayable(_ request: ProxyRequest) -> Bool {
        RetryPolicy.isSafeToRetry(request, retryNonIdempotent: binding.retryNonIdempotent)
    }

    func replayLimit(for request: ProxyRequest) -> Int? {
        guard !request.bodyLengthIsZero, carriesToken(request), isReplayable(request) else { return nil }
        return replayLimit
    }

    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        guard carriesToken(request) else { return .proceed }
        if let authorization = binding.store.currentAuthorization() {
            request.headers.replaceOrAdd(name: "Authorization", value: authorization)
            return .proceed
        }
        let store = binding.store
        let hostPort = request.hostPort
        let obtained = eventLoop.makePromise(of: AttemptRequestEdit.self)
        obtained.completeWithTask {
            let token: AccessToken
            do {
                token = try await store.accessToken()
            } catch var error as GatewayError {
                error.upstream = hostPort  // host:port, as in every gateway error
                throw error
            }
            let authorization = token.authorizationValue
            return { $0.headers.replaceOrAdd(name: "Authorization", value: authorization) }
        }
        return .wait(AttemptWait(editing: obtained.futureResult, cancel: {}))
    }

    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict {
        guard head.status == .unauthorized, CredentialScope.mayCarryCredential(request), binding.scope.permits(request),
            let sent = request.headers.first(name: "Authorization"), let token = Self.bearerToken(sent)
        else { return .accept }
        // With `client_auth: keep` the header may be the client's own.
        if binding.clientAuth == .keep, !binding.store.isCurrent(authorization: sent) { return .accept }
        let store = binding.store
        let rejected = AccessToken(token)
        if store.passesOnUnauthorized(rejected) { return .accept }
        guard mayReplay, isReplayable(request) else {
            // The 401 goes back as it is; the token is still replaced (once per
            // token value) so that the client's next request carries a new one.
            Task { _ = try? await store.accessToken(replacing: rejected) }
            return .accept
        }
        context.logger.debug("upstream answered 401; retrying once with a new access token", metadata: ["upstream": "\(binding.store.upstream)"])
        let hostPort = request.hostPort
        let replaced = eventLoop.makePromise(of: Void.self)
        replaced.completeWithTask {
            do {
                _ = try await store.accessToken(replacing: rejected)
            } catch var error as GatewayError {
                error.upstream = hostPort
                throw error
            }
        }
        return .replay(AttemptWait(future: replaced.futureResult, repeatStep: false, cancel: {}))
    }

    /// The token of a `Bearer` authorization value.
    static func bearerToken(_ authorization: String) -> String? {
        let prefix = "Bearer "
        guard authorization.utf8.count > prefix.utf8.count, authorization.hasPrefix(prefix) else { return nil }
        return String(authorization.dropFirst(prefix.count))
    }
}

extension TokenRefreshPolicy {
    /// The exchange's step: the same credential, decided on the event loop.
    public var step: any AttemptStep { TokenRefreshStep(binding: binding, replayLimit: replayLimit) }
}
