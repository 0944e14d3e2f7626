public import Logging

/// The gateway's whole configuration: an immutable snapshot, loaded and
/// validated by `ConfigLoader`. Reloading builds a new one and swaps it in.
public struct GatewayConfig: Sendable, Equatable {
    /// `listen`: proxy and admin addresses.
    public var listen: ListenConfig
    /// `open`: must be true to listen on a non-loopback address without `proxy_auth`.
    public var open: Bool
    /// `log_level`
    public var logLevel: Logger.Level
    /// `state_dir`: where tokens and the interception CA live. Kept as written
    /// (a relative path is relative to the working directory).
    public var stateDir: String
    /// `debug`: extra diagnostics (never secrets).
    public var debug: Bool
    /// `access`: allowed/denied hosts, CONNECT ports.
    public var access: AccessConfig
    /// `proxy_auth`: Basic credentials clients must present; nil means none.
    public var proxyAuth: ProxyAuthConfig?
    /// `limits`: listener limits and timeouts.
    public var limits: ListenerLimits
    /// `pool`: upstream connection pool.
    public var pool: PoolConfig
    /// `upstreams`: per-host settings, in file order.
    public var upstreams: [UpstreamConfig]
    /// `trace`: debug trace file and redaction (traces are written while `debug` is on).
    public var trace: TraceConfig
    /// `metrics`: per-endpoint metric bounds.
    public var metrics: MetricsConfig
    /// `interception`: the local CA for upstreams with `intercept: true`.
    public var interception: InterceptionConfig
    /// `shared_state`: tokens and rate limits shared with other replicas; nil = this gateway alone.
    public var sharedState: SharedStateConfig?
    /// `tracing`: OpenTelemetry spans and W3C trace context (off by default),
    /// with the standard `OTEL_*` variables applied by `ConfigLoader`.
    public var tracing: TracingConfig

    public static let defaultLogLevel: Logger.Level = .info
    public static let defaultStateDir = ".gateway"

    /// All defaults: loopback 8080/9090, any host allowed, no auth, no upstreams.
    public init() {
        self.init(listen: ListenConfig())
    }

    public init(
        listen: ListenConfig = ListenConfig(),
        open: Bool = false,
        logLevel: Logger.Level = GatewayConfig.defaultLogLevel,
        stateDir: String = GatewayConfig.defaultStateDir,
        debug: Bool = false,
        access: AccessConfig = AccessConfig(),
        proxyAuth: ProxyAuthConfig? = nil,
        limits: ListenerLimits = ListenerLimits(),
        pool: PoolConfig = PoolConfig(),
        upstreams: [UpstreamConfig] = [],
        trace: TraceConfig? = nil,
        metrics: MetricsConfig = MetricsConfig(),
        interception: InterceptionConfig? = nil,
        sharedState: SharedStateConfig? = nil,
        tracing: TracingConfig = TracingConfig()
    ) {
        self.listen = listen
        self.open = open
        self.logLevel = logLevel
        self.stateDir = stateDir
        self.debug = debug
        self.access = access
        self.proxyAuth = proxyAuth
        self.limits = limits
        self.pool = pool
        self.upstreams = upstreams
        // Paths left nil default to files under `stateDir`.
        self.trace = trace ?? TraceConfig(stateDir: stateDir)
        self.metrics = metrics
        self.interception = interception ?? InterceptionConfig(stateDir: stateDir)
        self.sharedState = sharedState
        self.tracing = tracing
    }

    /// First upstream whose hosts match `host` (case-insensitive), nil if none.
    public func upstream(forHost host: String) -> UpstreamConfig? {
        upstreamIndex(forHost: host).map { upstreams[$0] }
    }

    /// Where in ``upstreams`` the one serving `host` is, by a scan in file
    /// order: the reference of the routing index (``UpstreamHostIndex``, built
    /// once per load), which the request path reads instead, taking the few
    /// fields it needs in place (a whole `UpstreamConfig` copy is a retain and
    /// a release per field, per request).
    public func upstreamIndex(forHost host: String) -> Int? {
        upstreams.firstIndex { $0.matches(host: host) }
    }

    /// The upstream called `name`, if any.
    public func upstream(named name: String) -> UpstreamConfig? {
        upstreams.first { $0.name == name }
    }
}
