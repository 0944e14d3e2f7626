public import GatewayConfig
public import GatewayCore
import NIOConcurrencyHelpers

/// A config snapshot and the routes (one per upstream) built for it. Swapped
/// as one on reload, so each exchange runs start to end on the config it started with.
///
/// A class: every request reads the current one, and a struct copy of the
/// config (its strings, arrays, upstreams) cost a retain and a release per
/// field, per request; a reference costs one.
public final class ActiveConfig: Sendable {
    public let config: GatewayConfig
    public let routes: RouteTable
    /// Where the direct path sends requests (the upstream pool).
    public let transport: any UpstreamTransport
    /// Terminates TLS for `CONNECT`s to upstreams with `intercept: true`; nil when none intercepts.
    public let interceptor: TLSInterceptor?
    /// Proxy auth and access rules, the first steps of every request.
    let admission: [any AdmissionStep]

    public init(config: GatewayConfig, routes: RouteTable, transport: any UpstreamTransport, interceptor: TLSInterceptor? = nil) {
        self.config = config
        self.admission = Self.admissionSteps(for: config)
        self.routes = routes
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
