import GatewayCore
import Logging

/// The token state several gateways share (`shared_state`): a refresh is
/// coordinated through ``SharedTokenCoordination`` (one replica calls the
/// token endpoint, the others adopt what it committed), and a token obtained
/// while the database was unreachable is written there once it answers again.
extension TokenStore {
    /// Obtains a token: alone, by calling the token endpoint; with shared
    /// state, under the credential's cluster-wide lock, adopting a token
    /// another replica committed when it is usable (not the rejected one, not
    /// due for refresh). When the database is unreachable: a local token call
    /// (`on_unavailable: local`) or 503 `shared_state_unavailable` (`fail`; at
    /// once while the database is known to be down).
    func coordinatedRefresh(_ trigger: Trigger, rejected: String?) async throws -> SharedRefreshOutcome {
        guard let shared else { return .committed(try await obtainToken(base: nil)) }
        let identity = self.identity
        let margin = config.refreshBeforeExpiry.seconds
        let clock = self.clock
        guard shared.fallback == .local || shared.isAvailable else { throw unavailableError() }
        do {
            return try await shared.refresh(
                credential: identity,
                adopt: { committed in
                    guard let committed, committed.identity == identity, let token = committed.accessToken else { return false }
                    if let rejected, token == rejected { return false }
                    return !committed.needsRefresh(now: clock.secondsSince1970, margin: margin)
                },
                obtain: { committed in try await self.obtainToken(base: committed) }
            )
        } catch let unavailable as SharedStateUnavailable {
            guard shared.fallback == .local else { throw unavailableError() }
            logger.warning(
                "shared state unavailable; refreshing the token locally (it is written to the database once it answers)",
                metadata: ["upstream": "\(upstream)", "reason": "\(unavailable.reason)"]
            )
            return .uncommitted(try await obtainToken(base: nil), reason: unavailable.reason)
        }
    }

    /// `fail` mode's answer while the database does not answer: 503 `shared_state_unavailable`.
    private func unavailableError() -> GatewayError {
        var error = SharedStateFallback.unavailableError("cannot coordinate the token refresh for upstream \(upstream)")
        error.upstream = upstream
        return error
    }

    /// The state to start from, given the shared row (`result`) and the local
    /// one: the newer of the two (by when its token was obtained). A newer
    /// local state (obtained while the database was down, then restarted) is
    /// written to the database.
    func mergeShared(_ result: Result<OAuth2TokenState?, any Error>, over local: OAuth2TokenState) -> OAuth2TokenState {
        switch result {
        case .failure(let error):
            logger.warning("shared state unavailable at start; using the local token state", metadata: ["upstream": "\(upstream)", "error": "\(error)"])
            pendingReconcile = local.accessToken != nil
            return local
        case .success(let committed):
            guard let committed, committed.identity == identity, committed.version == OAuth2TokenState.formatVersion else {
                // Nothing shared yet: what this gateway has becomes the shared state.
                if local.accessToken != nil { scheduleReconcile() }
                return local
            }
            if (local.obtainedAt ?? 0) > (committed.obtainedAt ?? 0) {
                scheduleReconcile()
                return local
            }
            var merged = committed
            if merged.refreshToken == nil { merged.refreshToken = local.refreshToken }
            return merged
        }
    }

    /// Takes a state another replica committed when it is newer than this
    /// store's (and nothing is being refreshed or waits to be reconciled here).
    /// A store not used yet is loaded first.
    func adoptCommitted(_ committed: OAuth2TokenState?) async {
        await loadIfNeeded()
        guard let committed, committed.identity == identity, inFlight == nil, !pendingReconcile,
            (committed.obtainedAt ?? 0) > (state.obtainedAt ?? 0)
        else { return }
        let before = state
        await persist(committed)
        guard state == before, inFlight == nil else { return }
        state = committed
        clearFailures()
        logger.debug("adopted the token another gateway committed", metadata: ["upstream": "\(upstream)"])
    }

    private func scheduleReconcile() {
        pendingReconcile = true
        Task { await self.reconcileIfNeeded() }
    }

    /// Writes a token obtained without the database to it (unless a newer one
    /// was committed meanwhile, which is then adopted). Called after the load,
    /// and by the shared state's health check once the database answers again.
    public func reconcileIfNeeded() async {
        guard pendingReconcile, let shared, inFlight == nil else { return }
        let local = state
        do {
            let winner = try await shared.reconcile(credential: identity, state: local)
            pendingReconcile = false
            guard winner != local, winner.identity == identity, state == local else { return }
            await persist(winner)
            guard state == local else { return }
            state = winner
            logger.notice("adopted the newer token state committed by another gateway", metadata: ["upstream": "\(upstream)"])
        } catch {
            logger.debug("token state not reconciled yet", metadata: ["upstream": "\(upstream)", "error": "\(error)"])
        }
    }
}
