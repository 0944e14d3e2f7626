public import GatewayConfig
public import GatewayCore
public import Logging
import NIOConcurrencyHelpers

/// The ``TokenStore``s of a running gateway, one per OAuth2 upstream, kept
/// across config reloads: a reload that leaves an upstream's credential
/// (upstream name, `state_dir`, the whole `oauth2` block) unchanged keeps its
/// store, hence its token, its in-flight refresh and its backoff. A changed
/// credential gets a new store (which loads the state file only if it was
/// written for the same credential identity).
///
/// It is the trace redactor's ``RuntimeSecretSource``: the tokens of every
/// store it holds, read behind the stores' locks.
public final class TokenStoreRegistry: RuntimeSecretSource {
    private struct Entry {
        let stateDir: String
        let config: OAuth2Config
        let store: TokenStore
    }

    private let entries = NIOLockedValueBox<[String: Entry]>([:])
    /// Stores a reload replaced or forgot, newest last (at most
    /// ``retiredStoresKept``): exchanges still running may use their tokens,
    /// and their trace records must scrub them.
    private let retired = NIOLockedValueBox<[TokenStore]>([])
    static let retiredStoresKept = 8
    private let clock: any PolicyClock
    private let timeout: Duration
    /// The replicas' shared token state (`shared_state`); nil when alone.
    private let shared: (any SharedTokenCoordination)?

    public init(clock: any PolicyClock = SystemPolicyClock(), timeout: Duration = TokenEndpointClient.defaultTimeout, shared: (any SharedTokenCoordination)? = nil) {
        self.clock = clock
        self.timeout = timeout
        self.shared = shared
    }

    /// The tokens of every store (``TokenStore/runtimeSecrets()``), those a
    /// reload retired included; empty when no upstream uses OAuth2.
    public func runtimeSecrets() -> [RuntimeSecret] {
        var stores = entries.withLockedValue { entries in entries.isEmpty ? [] : entries.values.map(\.store) }
        stores += retired.withLockedValue { $0 }
        guard !stores.isEmpty else { return [] }
        return stores.flatMap { $0.runtimeSecrets() }
    }

    /// Hands each store the state the replicas committed for its credential
    /// (loading stores not used yet), so every replica holds the newest token
    /// and refresh token before the database might become unreachable.
    public func adoptCommitted(_ states: [String: OAuth2TokenState]) async {
        let stores = entries.withLockedValue { $0.values.map(\.store) }
        for store in stores {
            await store.adoptCommitted(states[store.identity])
        }
    }

    /// Writes tokens obtained while the shared database was unreachable to it
    /// (called when it answers again).
    public func reconcilePending() async {
        let stores = entries.withLockedValue { $0.values.map(\.store) }
        for store in stores { await store.reconcileIfNeeded() }
    }

    /// The stores for every `type: oauth2` upstream of `config`, by upstream name.
    /// Upstreams no longer configured are forgotten (exchanges still running keep theirs).
    public func stores(for config: GatewayConfig, transport: any HTTPRequestSender, events: any GatewayEvents, logger: Logger) -> [String: TokenStore] {
        var wanted: [(name: String, oauth: OAuth2Config)] = []
        for upstream in config.upstreams {
            if case .oauth2(let oauth)? = upstream.auth?.kind {
                wanted.append((upstream.name, oauth))
            }
        }
        return entries.withLockedValue { entries in
            var next: [String: Entry] = [:]
            for (name, oauth) in wanted {
                let route = TokenEndpointRoute(tokenURL: oauth.tokenURL, config: config)
                if let existing = entries[name], existing.stateDir == config.stateDir, existing.config == oauth {
                    existing.store.update(route: route)
                    next[name] = existing
                    continue
                }
                let store = TokenStore(
                    upstream: name, config: oauth, stateDir: config.stateDir, route: route,
                    transport: transport, clock: clock, events: events, timeout: timeout, shared: shared, logger: logger
                )
                if route == nil {
                    logger.error("token_url is not a usable http(s) URL; requests for this upstream will fail", metadata: ["upstream": "\(name)"])
                }
                next[name] = Entry(stateDir: config.stateDir, config: oauth, store: store)
            }
            let dropped = entries.values.map(\.store).filter { store in next[store.upstream]?.store !== store }
            if !dropped.isEmpty {
                retired.withLockedValue { retired in
                    retired += dropped
                    if retired.count > Self.retiredStoresKept { retired.removeFirst(retired.count - Self.retiredStoresKept) }
                }
            }
            entries = next
            return next.mapValues(\.store)
        }
    }
}
