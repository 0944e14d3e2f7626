public import GatewayCore
import NIOConcurrencyHelpers
public import Prometheus

/// The gateway's metrics: the Prometheus registry behind `/metrics` (names in
/// `MetricFamily`, as in DESIGN.md; the dashboards rely on them), the
/// per-endpoint recorders behind `/stats`, and the `GatewayEvents` sink the
/// other layers report to. Long-lived: it survives config reloads.
public final class GatewayMetrics: GatewayEvents, Sendable {
    public let registry: PrometheusCollectorRegistry
    /// The stats clock (injectable for tests).
    let now: @Sendable () -> ContinuousClock.Instant
    let startedAt: ContinuousClock.Instant
    let statsWindow: Duration
    let statsSlices: Int
    let factory: MetricHandleFactory
    let endpoints: EndpointRegistry
    private let openConnections: LabeledHandles<Gauge>
    private let clientConnections: Gauge
    private let clientConnectionsRefused: LabeledHandles<Counter>
    let pinFailures: LabeledHandles<Counter>
    let retries: LabeledHandles<Counter>
    let tokenRefreshes: LabeledHandles<Counter>
    let rateLimitedRequests: LabeledHandles<Counter>
    let queued: LabeledHandles<Gauge>
    let interceptionCertificates: LabeledHandles<Counter>
    let interceptionHandshakeFailures: LabeledHandles<Counter>
    let webSockets: LabeledHandles<Gauge>
    let webSocketBytes: LabeledHandles<Counter>
    let spansDropped: LabeledHandles<Counter>
    let faultsInjected: LabeledHandles<Counter>
    let mockedResponses: LabeledHandles<Counter>
    /// Upstreams with a client certificate expiry series (`+ClientCertificates.swift`).
    let clientCertificateUpstreams = NIOLockedValueBox<Set<String>>([])

    /// - Parameters:
    ///   - statsWindow: the sliding window of `/stats` (`metrics.stats_window`).
    ///   - statsSlices: the window is cut in this many slices (rotated).
    ///   - maxHostUpstreams: unconfigured hosts named in `upstream` labels before `other`.
    ///   - now: the stats clock.
    public init(
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        version: String = GatewayVersion.current,
        statsWindow: Duration = .seconds(300),
        statsSlices: Int = 10,
        maxHostUpstreams: Int = 100,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.registry = registry
        self.now = now
        let startedAt = now()
        self.startedAt = startedAt
        self.statsWindow = statsWindow
        self.statsSlices = statsSlices
        let factory = MetricHandleFactory(registry: registry)
        self.factory = factory
        self.endpoints = EndpointRegistry(maxHostUpstreams: maxHostUpstreams) { key in
            EndpointRecorder(key: key, factory: factory, stats: SlidingWindowStats(window: statsWindow, sliceCount: statsSlices, origin: startedAt))
        }
        self.openConnections = LabeledHandles { factory.gauge(.upstreamConnections, $0) }
        self.clientConnections = factory.gauge(.clientConnections, [])
        self.clientConnectionsRefused = LabeledHandles { factory.counter(.clientConnectionsRefused, $0) }
        factory.gauge(.buildInfo, [version]).set(1 as Int64)
        self.pinFailures = LabeledHandles { factory.counter(.pinFailures, $0) }
        self.retries = LabeledHandles { factory.counter(.retries, $0) }
        self.tokenRefreshes = LabeledHandles { factory.counter(.tokenRefreshes, $0) }
        self.rateLimitedRequests = LabeledHandles { factory.counter(.rateLimited, $0) }
        self.queued = LabeledHandles { factory.gauge(.queuedRequests, $0) }
        self.interceptionCertificates = LabeledHandles { factory.counter(.interceptionCertificates, $0) }
        self.interceptionHandshakeFailures = LabeledHandles { factory.counter(.interceptionHandshakeFailures, $0) }
        self.webSockets = LabeledHandles { factory.gauge(.webSocketsOpen, $0) }
        self.webSocketBytes = LabeledHandles { factory.counter(.webSocketBytes, $0) }
        self.spansDropped = LabeledHandles { factory.counter(.traceSpansDropped, $0) }
        self.faultsInjected = LabeledHandles { factory.counter(.faultsInjected, $0) }
        self.mockedResponses = LabeledHandles { factory.counter(.mockedResponses, $0) }
    }

    /// The exposition text for `/metrics`: every family, with HELP and TYPE even before its first sample.
    public func exposition() -> [UInt8] {
        factory.exposition()
    }

    /// Configured upstream names are `upstream` labels as they are; unconfigured
    /// hosts only up to a bound. `MetricsObserver` registers them for each config.
    public func addConfiguredUpstreams(_ names: some Sequence<String>) {
        endpoints.addConfiguredUpstreams(names)
    }

    /// The bounded `upstream` label for a configured name or a host.
    public func upstreamLabel(_ name: String) -> String {
        endpoints.upstreamLabel(name)
    }

    /// The recorder of an endpoint (made the first time; `other` beyond the bounds).
    public func endpoint(upstream: String, method: String, endpoint: String, configured: Bool, maxEndpoints: Int) -> EndpointRecorder {
        endpoints.recorder(upstream: upstream, method: method, endpoint: endpoint, configured: configured, maxEndpoints: maxEndpoints)
    }

    /// Sets `gateway_shared_state_up` (only gateways with `shared_state` call it).
    public func setSharedStateUp(_ up: Bool) {
        factory.gauge(.sharedStateUp, []).set(up ? 1 as Int64 : 0)
    }

    /// Sets the open client connections gauge (read from the listener at scrape time).
    public func setClientConnections(_ count: Int) {
        clientConnections.set(Int64(count))
    }

    // MARK: GatewayEvents

    public func clientConnectionRefused(reason: String) {
        clientConnectionsRefused.get([reason]).increment()
    }

    public func pinFailure(host: String, upstream: String?, mode: PinMode) {
        pinFailures.get([upstreamLabel(upstream ?? host), mode.rawValue]).increment()
    }

    public func upstreamConnectionOpened(host: String, port: Int) {
        upstreamConnectionOpened(host: host, port: port, httpVersion: UpstreamHTTPVersion.http1Name)
    }

    public func upstreamConnectionClosed(host: String, port: Int) {
        upstreamConnectionClosed(host: host, port: port, httpVersion: UpstreamHTTPVersion.http1Name)
    }

    public func upstreamConnectionOpened(host: String, port: Int, httpVersion: String) {
        openConnections.get([Self.protocolLabel(httpVersion)]).increment()
    }

    public func upstreamConnectionClosed(host: String, port: Int, httpVersion: String) {
        openConnections.get([Self.protocolLabel(httpVersion)]).decrement()
    }

    /// A protocol as labels name it: its ALPN id (`http/1.1`, `h2`), `none` without one.
    static func protocolLabel(_ httpVersion: String?) -> String {
        switch httpVersion {
        case UpstreamHTTPVersion.http2Name?: "h2"
        case nil: "none"
        default: "http/1.1"
        }
    }

    /// `gateway_retries_total{upstream,reason}`; `reason` must come from a fixed set.
    public func retry(upstream: String, reason: String) {
        retries.get([upstreamLabel(upstream), reason]).increment()
    }

    /// `gateway_token_refreshes_total{upstream,trigger,result}`.
    public func tokenRefresh(upstream: String, trigger: String, result: String) {
        tokenRefreshes.get([upstreamLabel(upstream), trigger, result]).increment()
    }

    /// `gateway_rate_limited_total{upstream,source}`; source `local` or `upstream`.
    public func rateLimited(upstream: String, source: String) {
        rateLimitedRequests.get([upstreamLabel(upstream), source]).increment()
    }

    /// `gateway_queued_requests{upstream}`.
    public func queueDepth(upstream: String, depth: Int) {
        queued.get([upstreamLabel(upstream)]).set(Int64(depth))
    }
}

/// The gateway's version string.
public enum GatewayVersion {
    public static let current = "0.1.0"
}
