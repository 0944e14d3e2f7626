import GatewayCore

/// What the event loops may read of a ``TokenStore`` without an actor hop:
/// the current token and what decides whether a request may use it at once.
/// The store publishes a new snapshot (behind a lock held for nanoseconds)
/// whenever one of these changes: after the state file is read, when a
/// refresh starts or ends, and after a failure. The trace writer reads the
/// tokens from it too (``runtimeSecrets(upstream:)``), to scrub them.
struct TokenSnapshot: Sendable {
    /// The state file was read (or found missing): `state` is the store's.
    var loaded = false
    var state: OAuth2TokenState
    /// `Authorization: Bearer …` for `state.accessToken`, made once per token.
    var authorization: String?
    /// A token call is in flight.
    var refreshing = false
    /// After a failure, no token call before this (the store fails fast).
    var retryNotBefore: ContinuousClock.Instant?
    /// The token the last 401-triggered refresh obtained, and when.
    var lastUnauthorizedRefresh: (token: String, at: ContinuousClock.Instant)?
    /// Access tokens this store used before the current one, newest last (at
    /// most ``retiredTokensKept``): a trace record of an exchange that sent one
    /// may be written after the refresh that replaced it, and must scrub it too.
    private(set) var retiredAccessTokens: [String] = []

    static let retiredTokensKept = 4

    init(state: OAuth2TokenState) {
        self.state = state
    }

    /// Keeps `token`, just replaced, among ``retiredAccessTokens``.
    mutating func retire(_ token: String) {
        retiredAccessTokens.removeAll { $0 == token }
        retiredAccessTokens.append(token)
        if retiredAccessTokens.count > Self.retiredTokensKept { retiredAccessTokens.removeFirst() }
    }

    /// The tokens a trace must scrub: the current access token, the retired
    /// ones, and the current refresh token (a rotated one is in no config).
    func runtimeSecrets(upstream: String) -> [RuntimeSecret] {
        var secrets: [RuntimeSecret] = []
        if let token = state.accessToken { secrets.append(RuntimeSecret(value: token, name: "\(upstream)_ACCESS_TOKEN")) }
        for token in retiredAccessTokens where token != state.accessToken {
            secrets.append(RuntimeSecret(value: token, name: "\(upstream)_ACCESS_TOKEN"))
        }
        if let token = state.refreshToken { secrets.append(RuntimeSecret(value: token, name: "\(upstream)_REFRESH_TOKEN")) }
        return secrets
    }

    /// What to do for a request now: use the current token, or wait for the store. The same rule as
    /// ``TokenStore/accessToken()``: a token within `margin` of its expiry is
    /// refreshed first, unless the store is backing off after a failed refresh
    /// and the token has not actually expired (then it is used meanwhile).
    func usableAuthorization(clock: any PolicyClock, margin: Double) -> String? {
        guard loaded, let authorization else { return nil }
        let now = clock.secondsSince1970
        if !state.needsRefresh(now: now, margin: margin) { return authorization }
        guard !refreshing, let retryNotBefore, clock.now < retryNotBefore, !state.isExpired(now: now) else { return nil }
        return authorization
    }

    /// Whether a 401 to `rejected` is passed on without a refresh: the token
    /// is the current one and was itself obtained after a 401 less than
    /// `interval` ago (the rule of ``TokenStore/accessToken(replacing:)``).
    func passesOnUnauthorized(_ rejected: String, instant: ContinuousClock.Instant, interval: Duration) -> Bool {
        guard loaded, !refreshing, state.accessToken == rejected, let last = lastUnauthorizedRefresh else { return false }
        return last.token == rejected && instant < last.at + interval
    }
}
