public import GatewayCore

/// What a token store does when the shared database cannot be reached
/// (`shared_state.postgres.on_unavailable`).
public enum SharedStateFallback: String, Sendable {
    /// Refresh and limit locally, as a lone gateway; reconcile later.
    case local
    /// Refuse with 503 `shared_state_unavailable`.
    case fail

    /// The error a request gets in `fail` mode.
    public static func unavailableError(_ what: String) -> GatewayError {
        GatewayError(.sharedStateUnavailable, "the shared state database is unavailable: \(what)")
    }
}

/// The shared database could not be reached (or answered with an error)
/// before anything was changed in it. `reason` is short and never carries a
/// secret or the connection URL.
public struct SharedStateUnavailable: Error, Sendable, CustomStringConvertible {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }

    public var description: String { "shared state unavailable: \(reason)" }
}

/// How a ``SharedTokenCoordination/refresh(credential:adopt:obtain:)`` ended.
public enum SharedRefreshOutcome: Sendable {
    /// Another replica had committed a usable token: no token call was made.
    case adopted(OAuth2TokenState)
    /// This replica obtained a token and committed it (with the rotated refresh token).
    case committed(OAuth2TokenState)
    /// This replica obtained a token but could not commit it (the database
    /// went away mid-refresh): it must keep it locally and reconcile later.
    case uncommitted(OAuth2TokenState, reason: String)
}

/// One OAuth2 credential's token state shared by every replica: one row per
/// credential (``CredentialIdentity``), refreshed by one replica at a time.
public protocol SharedTokenCoordination: Sendable {
    var fallback: SharedStateFallback { get }

    /// Whether the database answered its last operation (one atomic read). In
    /// `fail` mode a refresh is refused at once while it did not, instead of
    /// waiting out `connect_timeout` per refresh; the sync loop notices when it
    /// answers again.
    var isAvailable: Bool { get }

    /// The state the replicas committed for `credential`; nil when none yet.
    /// Throws ``SharedStateUnavailable``.
    func committedState(credential: String) async throws -> OAuth2TokenState?

    /// Holding the credential's cluster-wide lock (released with the
    /// transaction, or with the connection if this process dies): reads the
    /// committed state; when `adopt` accepts it, returns it (`.adopted`);
    /// otherwise calls `obtain` with it and commits the result in the same
    /// transaction before returning it. Errors of `obtain` are rethrown
    /// unchanged (nothing is committed); ``SharedStateUnavailable`` means
    /// `obtain` was not called.
    func refresh(
        credential: String,
        adopt: @escaping @Sendable (OAuth2TokenState?) -> Bool,
        obtain: @escaping @Sendable (OAuth2TokenState?) async throws -> OAuth2TokenState
    ) async throws -> SharedRefreshOutcome

    /// Every committed state, by credential (read at each sync, so that
    /// replicas learn new tokens, and rotated refresh tokens, without waiting
    /// to need one).
    func allCommittedStates() async throws -> [String: OAuth2TokenState]

    /// Writes `state` (obtained while the database was unreachable) unless the
    /// committed state is newer; returns the state that won.
    func reconcile(credential: String, state: OAuth2TokenState) async throws -> OAuth2TokenState
}
