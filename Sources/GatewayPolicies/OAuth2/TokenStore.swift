public import GatewayConfig
public import GatewayCore
public import Logging
import NIOConcurrencyHelpers
import NIOPosix

/// The OAuth2 state of one credential (one upstream): access token, expiry,
/// refresh token, persisted in `state_dir/<upstream>.json` and loaded on first use.
///
/// **Single flight**: however many requests need a new token at once (expired,
/// about to expire, or rejected with 401), one token call is in flight per
/// store; every caller awaits that same call and gets its result, success or
/// failure, once. After a failure no new call is made for
/// min(2ⁿ⁻¹ s, 60 s) (n = consecutive failures): callers in that window fail at
/// once with the last failure instead of hammering the token endpoint.
///
/// A rotated refresh token is written to disk before the new access token is
/// handed to anyone.
public actor TokenStore {
    /// What made a refresh necessary; the `trigger` label of `gateway_token_refreshes_total`.
    public enum Trigger: String, Sendable {
        /// No access token yet: the first request that needs one (nothing
        /// stored). Tokens are fetched lazily, never at start-up, so this is
        /// not `startup` (its name until issue 52: a first fetch an hour after
        /// start was logged as one).
        case firstUse = "first_use"
        /// The access token expired or is within `refresh_before_expiry` of it.
        case expiry
        /// The upstream answered 401 to the current token.
        case unauthorized = "401"
    }

    public static let maxBackoff: Duration = .seconds(60)
    /// A 401 refreshes at most once per token value, and a token obtained
    /// after a 401 is not replaced again on 401 within this interval: the
    /// upstream rejects even fresh tokens, so the 401 goes back to the client
    /// (at most one such refresh a minute however many requests are rejected).
    public static let unauthorizedRefreshInterval: Duration = .seconds(60)
    /// The shortest lifetime believed from a token endpoint: `expires_in: 0`
    /// (or a few seconds) would otherwise make every request call it.
    public static let minimumTokenLifetime: Double = 30

    public nonisolated let upstream: String
    public nonisolated let config: OAuth2Config
    public nonisolated let file: TokenStateFile
    nonisolated let identity: String
    nonisolated let client: TokenEndpointClient
    nonisolated let clock: any PolicyClock
    nonisolated let events: any GatewayEvents
    nonisolated let logger: Logger
    /// Where token calls go; replaced on config reload (the upstream's TLS may change).
    private nonisolated let routeBox: NIOLockedValueBox<TokenEndpointRoute?>

    /// What the event loops read without a hop (``TokenSnapshot``), republished on every change below.
    private nonisolated let snapshot: NIOLockedValueBox<TokenSnapshot>

    var state: OAuth2TokenState { didSet { publish() } }
    var loaded = false { didSet { publish() } }
    /// The one read of the state file, shared by whoever needs it first.
    var loading: Task<StoredStates, Never>?
    var inFlight: Task<AccessToken, any Error>? { didSet { publish() } }
    private var consecutiveFailures = 0
    private var retryNotBefore: ContinuousClock.Instant? { didSet { publish() } }
    private var lastFailure: TokenRefreshFailure?
    /// The token the last 401-triggered refresh obtained, and when.
    private var lastUnauthorizedRefresh: (token: String, at: ContinuousClock.Instant)? { didSet { publish() } }
    /// The last token call's answer carried a new refresh token (for the log line).
    private var rotatedLast = false
    /// A token obtained while the shared database was unreachable, not written there yet.
    var pendingReconcile = false
    /// The replicas' shared token state; nil when this gateway is alone.
    public nonisolated let shared: (any SharedTokenCoordination)?
    /// Whether a too short `expires_in` was logged already (once per store).
    private var loggedShortLifetime = false
    /// Token endpoint calls made by this store (for tests and diagnostics).
    public private(set) var tokenCalls = 0
    /// Callers awaiting the refresh in flight right now (for tests: proves they share one call).
    public private(set) var refreshWaiters = 0

    /// - Parameters:
    ///   - route: where token calls go; nil when `token_url` is unusable (every refresh then fails).
    ///   - transport: the upstream pool (or a test double).
    public init(
        upstream: String,
        config: OAuth2Config,
        stateDir: String,
        route: TokenEndpointRoute?,
        transport: any HTTPRequestSender,
        clock: any PolicyClock = SystemPolicyClock(),
        events: any GatewayEvents = NoGatewayEvents(),
        timeout: Duration = TokenEndpointClient.defaultTimeout,
        shared: (any SharedTokenCoordination)? = nil,
        logger: Logger
    ) {
        self.shared = shared
        self.upstream = upstream
        self.config = config
        self.file = TokenStateFile(stateDir: stateDir, upstream: upstream)
        self.identity = CredentialIdentity.of(config)
        self.client = TokenEndpointClient(upstream: upstream, config: config, transport: transport, clock: clock, timeout: timeout, logger: logger)
        self.clock = clock
        self.events = events
        self.logger = logger
        self.routeBox = NIOLockedValueBox(route)
        let state = OAuth2TokenState(identity: identity, refreshToken: config.refreshToken?.value)
        self.state = state
        self.snapshot = NIOLockedValueBox(TokenSnapshot(state: state))
    }

    /// The `Authorization` value a request may carry right now, read without
    /// an actor hop (on an event loop); nil when it must wait for
    /// ``accessToken()`` (no token yet, or one due for refresh).
    public nonisolated func currentAuthorization() -> String? {
        let margin = config.refreshBeforeExpiry.seconds
        return snapshot.withLockedValue { $0.usableAuthorization(clock: clock, margin: margin) }
    }

    /// Whether a 401 to `rejected` goes back to the client without a refresh
    /// (``accessToken(replacing:)`` would answer nil), read without an actor hop.
    public nonisolated func passesOnUnauthorized(_ rejected: AccessToken) -> Bool {
        let now = clock.now
        return snapshot.withLockedValue { $0.passesOnUnauthorized(rejected.value, instant: now, interval: Self.unauthorizedRefreshInterval) }
    }

    /// Whether `authorization` carries this store's current token (not one the client sent).
    public nonisolated func isCurrent(authorization: String) -> Bool {
        snapshot.withLockedValue { $0.authorization == authorization }
    }

    /// The current access token, those it replaced lately and the current
    /// refresh token, named after the upstream (`<UPSTREAM>_ACCESS_TOKEN`),
    /// read without an actor hop: what a trace record must scrub.
    public nonisolated func runtimeSecrets() -> [RuntimeSecret] {
        snapshot.withLockedValue { $0.runtimeSecrets(upstream: upstream) }
    }

    /// Copies what the loops read into ``snapshot``.
    private func publish() {
        let state = self.state
        let loaded = self.loaded
        let refreshing = inFlight != nil
        let retryNotBefore = self.retryNotBefore
        let lastUnauthorizedRefresh = self.lastUnauthorizedRefresh
        snapshot.withLockedValue { snapshot in
            if snapshot.authorization == nil || snapshot.state.accessToken != state.accessToken {
                if let replaced = snapshot.state.accessToken, replaced != state.accessToken { snapshot.retire(replaced) }
                snapshot.authorization = state.accessToken.map { AccessToken($0).authorizationValue }
            }
            snapshot.state = state
            snapshot.loaded = loaded
            snapshot.refreshing = refreshing
            snapshot.retryNotBefore = retryNotBefore
            snapshot.lastUnauthorizedRefresh = lastUnauthorizedRefresh
        }
    }

    /// Points token calls at a new route (config reload). Takes effect from the next call.
    public nonisolated func update(route: TokenEndpointRoute?) {
        routeBox.withLockedValue { $0 = route }
    }

    /// A usable access token: the current one unless it is missing, expired or
    /// within `refresh_before_expiry` of expiring; then a refresh (joined if one
    /// is in flight). If that refresh fails while the current token has not
    /// actually expired yet, the current token is still returned.
    public func accessToken() async throws -> AccessToken {
        await loadIfNeeded()
        let now = clock.secondsSince1970
        if let token = state.accessToken, !state.needsRefresh(now: now, margin: config.refreshBeforeExpiry.seconds) {
            return AccessToken(token)
        }
        let trigger: Trigger = state.accessToken == nil ? .firstUse : .expiry
        do {
            return try await refresh(trigger)
        } catch {
            if let token = state.accessToken, !state.isExpired(now: clock.secondsSince1970) {
                logger.debug("token refresh failed; using the current token until it expires", metadata: ["upstream": "\(upstream)"])
                return AccessToken(token)
            }
            throw error
        }
    }

    /// A replacement for `rejected`, which the upstream answered 401 to. If the
    /// current token is already another one (a concurrent refresh replaced it),
    /// that one, without a token call: a token value causes at most one
    /// refresh. Nil when the rejected token was itself obtained after a 401
    /// less than ``unauthorizedRefreshInterval`` ago: the caller passes the 401
    /// on instead of refreshing in a loop.
    public func accessToken(replacing rejected: AccessToken) async throws -> AccessToken? {
        await loadIfNeeded()
        if let current = state.accessToken, current != rejected.value, !state.isExpired(now: clock.secondsSince1970) {
            return AccessToken(current)
        }
        // The snapshot mirrors this actor's state (published on every change).
        if passesOnUnauthorized(rejected) { return nil }
        return try await refresh(.unauthorized, rejected: rejected.value)
    }

    /// The refresh in flight, or a new one; fails fast during backoff.
    /// `rejected`: the token a 401 answered (a refresh by another replica that replaced it is adopted).
    private func refresh(_ trigger: Trigger, rejected: String? = nil) async throws -> AccessToken {
        let task: Task<AccessToken, any Error>
        if let inFlight {
            task = inFlight
        } else {
            if let retryNotBefore, clock.now < retryNotBefore, let lastFailure {
                throw lastFailure.gatewayError(upstream: upstream)
            }
            task = Task { try await self.performRefresh(trigger, rejected: rejected) }
            inFlight = task
        }
        refreshWaiters += 1
        defer { refreshWaiters -= 1 }
        return try await task.value
    }

    /// The one refresh; its outcome is shared by every waiter of `inFlight`.
    /// With shared state, a token another replica committed meanwhile is
    /// adopted instead of calling the token endpoint.
    private func performRefresh(_ trigger: Trigger, rejected: String?) async throws -> AccessToken {
        defer { inFlight = nil }
        let outcome: SharedRefreshOutcome
        do {
            outcome = try await coordinatedRefresh(trigger, rejected: rejected)
        } catch let error as GatewayError {
            throw error
        } catch {
            let failure = (error as? TokenRefreshFailure) ?? TokenRefreshFailure(reason: "internal_error", detail: "the token call failed unexpectedly")
            throw recordFailure(failure, trigger: trigger)
        }
        let next: OAuth2TokenState
        switch outcome {
        case .adopted(let committed): next = committed
        case .committed(let obtained): next = obtained
        case .uncommitted(let obtained, let reason):
            next = obtained
            if shared != nil {
                pendingReconcile = true
                logger.error(
                    "the new token could not be committed to the shared state; it is kept locally and written there once the database answers",
                    metadata: ["upstream": "\(upstream)", "reason": "\(reason)"]
                )
            }
        }
        // Persist before anyone uses the new token: a crash after this point
        // keeps the rotated refresh token. (While the file is written, other
        // callers still see the old state and `inFlight`, so they wait.)
        await persist(next)
        state = next
        clearFailures()
        let token = next.accessToken ?? ""
        if case .adopted = outcome {
            events.tokenRefresh(upstream: upstream, trigger: trigger.rawValue, result: "shared")
            logger.debug("using the access token another gateway obtained", metadata: ["upstream": "\(upstream)", "trigger": "\(trigger.rawValue)"])
            return AccessToken(token)
        }
        if trigger == .unauthorized { lastUnauthorizedRefresh = (token, clock.now) }
        events.tokenRefresh(upstream: upstream, trigger: trigger.rawValue, result: "success")
        var metadata: Logger.Metadata = ["upstream": "\(upstream)", "trigger": "\(trigger.rawValue)"]
        if let expiresAt = next.expiresAt, let obtainedAt = next.obtainedAt { metadata["expires_in_s"] = "\(Int(expiresAt - obtainedAt))" }
        if rotatedLast { metadata["refresh_token"] = "rotated" }
        logger.info("access token refreshed", metadata: metadata)
        return AccessToken(token)
    }

    /// The one token call: the endpoint's answer applied to `base` (the state
    /// the replicas committed, or this store's own).
    func obtainToken(base committed: OAuth2TokenState?) async throws -> OAuth2TokenState {
        tokenCalls += 1
        let base = committed.flatMap { $0.identity == identity ? $0 : nil } ?? state
        guard let route = routeBox.withLockedValue({ $0 }) else {
            throw TokenRefreshFailure(reason: "invalid_token_url", detail: "token_url is not a usable http(s) URL")
        }
        let response = try await client.requestToken(route: route, refreshToken: base.refreshToken ?? state.refreshToken)
        let now = clock.secondsSince1970
        var next = base
        next.accessToken = response.accessToken
        next.obtainedAt = now
        next.expiresAt = response.expiresIn.map { now + lifetime($0) }
        rotatedLast = response.refreshToken != nil
        if let rotated = response.refreshToken { next.refreshToken = rotated }
        return next
    }

    /// `expires_in`, but at least ``minimumTokenLifetime`` (logged once per store).
    private func lifetime(_ expiresIn: Double) -> Double {
        guard expiresIn < Self.minimumTokenLifetime else { return expiresIn }
        if !loggedShortLifetime {
            loggedShortLifetime = true
            logger.warning(
                "token endpoint gave a very short expires_in; the token is used for the minimum lifetime instead",
                metadata: ["upstream": "\(upstream)", "expires_in_s": "\(Int(expiresIn))", "used_s": "\(Int(Self.minimumTokenLifetime))"]
            )
        }
        return Self.minimumTokenLifetime
    }

    /// A token was obtained (here or by another replica): no backoff.
    func clearFailures() {
        consecutiveFailures = 0
        retryNotBefore = nil
        lastFailure = nil
    }

    /// Counts the failure, starts the backoff, and returns the error for the waiters.
    private func recordFailure(_ failure: TokenRefreshFailure, trigger: Trigger) -> GatewayError {
        consecutiveFailures += 1
        let backoff = Backoff.ceiling(retry: consecutiveFailures - 1, base: .seconds(1), max: Self.maxBackoff)
        retryNotBefore = clock.now + backoff
        lastFailure = failure
        events.tokenRefresh(upstream: upstream, trigger: trigger.rawValue, result: "failure")
        logger.warning(
            "access token refresh failed",
            metadata: [
                "upstream": "\(upstream)", "trigger": "\(trigger.rawValue)", "reason": "\(failure.reason)",
                "failures": "\(consecutiveFailures)", "next_attempt_in_s": "\(backoff.seconds)",
            ]
        )
        return failure.gatewayError(upstream: upstream)
    }

    /// Writes the state file on NIO's blocking-I/O thread pool (temp file,
    /// fsync, rename): neither the event loops nor the cooperative pool block on the disk.
    func persist(_ next: OAuth2TokenState) async {
        let file = self.file
        do {
            try await NIOThreadPool.singleton.runIfActive { try file.save(next) }
        } catch {
            // The rotated token lives in memory only; the next refresh tries again.
            logger.error("could not persist the token state; a restart may need a new refresh token", metadata: ["upstream": "\(upstream)", "error": "\(error)"])
        }
    }
}
