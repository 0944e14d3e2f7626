public import GatewayConfig
public import GatewayCore
import NIOConcurrencyHelpers

/// A config snapshot and the phases built for it (GatewayApp's
/// `ExchangePhases`): the admission steps, and the routes (one per upstream);
/// and its indexes, built here: which upstream serves a host, and the access
/// rules for a `CONNECT`. Swapped as one on reload, so each exchange runs
/// start to end on the config it started with.
///
/// A class: every request reads the current one, and a struct copy of the
/// config (its strings, arrays, upstreams) cost a retain and a release per
/// field, per request; a reference costs one.
public final class ActiveConfig: Sendable {
    public let config: GatewayConfig
    public let routes: RouteTable
    /// Which of `config.upstreams` serves a host (the scan of
    /// ``GatewayConfig/upstreamIndex(forHost:)`` as hash lookups).
    public let upstreamHosts: UpstreamHostIndex
    /// `config.access` indexed: a `CONNECT`'s target and the address it reached.
    public let access: AccessIndex
    /// Where exchanges send their requests (the upstream pool).
    public let transport: any UpstreamTransport
    /// Terminates TLS for `CONNECT`s to upstreams with `intercept: true`; nil when none intercepts.
    public let interceptor: TLSInterceptor?
    /// The first steps of every request, in order: proxy auth (when configured), access rules.
    package let admission: [any AdmissionStep]

    package init(config: GatewayConfig, admission: [any AdmissionStep], routes: RouteTable, transport: any UpstreamTransport, interceptor: TLSInterceptor? = nil) {
        self.config = config
        self.admission = admission
        self.routes = routes
        self.upstreamHosts = UpstreamHostIndex(config.upstreams)
        self.access = AccessIndex(config.access)
        self.transport = transport
        self.interceptor = interceptor
    }
}

/// The current `ActiveConfig`, swapped atomically on reload.
public final class LiveConfig: Sendable {
    private let box: NIOLockedValueBox<ActiveConfig>

    public init(_ active: ActiveConfig) {
        box = NIOLockedValueBox(active)
    }

    public var current: ActiveConfig { box.withLockedValue { $0 } }

    public func replace(with active: ActiveConfig) {
        box.withLockedValue { $0 = active }
    }
}
