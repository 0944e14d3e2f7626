public import GatewayConfig
import GatewayCore
public import Logging

/// Records every client request per endpoint: `gateway_requests_total`,
/// `gateway_request_duration_seconds` (client-visible, up to the end of the
/// response body), per attempt `gateway_upstream_attempts_total` and
/// `gateway_upstream_phase_seconds`, and the `/stats` window.
///
/// An observer of every exchange (``MetricsObservation``), after trace: it
/// sees the whole exchange, retries included, and records it when the
/// response ends, fails, or the client goes away.
public struct MetricsObserver: Sendable {
    let metrics: GatewayMetrics
    private let templates: EndpointTemplates
    private let maxEndpoints: Int
    /// Some upstream has faults, mocks or replay: exchanges' records are read for them.
    let watchesInjections: Bool

    /// Made at each config load: registers the config's upstreams, starts the
    /// series its label sets fix at 0 (``GatewayMetrics/startKnownSeries(of:)``),
    /// and sends the warning about id-like paths to `logger`.
    public init(metrics: GatewayMetrics, config: GatewayConfig, logger: Logger? = nil) {
        self.metrics = metrics
        self.watchesInjections = config.upstreams.contains { $0.faults != nil || $0.mocks != nil || $0.replay != nil }
        metrics.addConfiguredUpstreams(config.upstreams.map(\.name))
        if let logger { metrics.endpoints.setLogger(logger) }
        self.templates = EndpointTemplates(config: config)
        self.maxEndpoints = config.metrics.maxEndpointsPerUpstream
        metrics.startKnownSeries(of: config)
    }

    /// The endpoint: configured templates of the request's upstream first, then
    /// automatic normalization (``EndpointTemplates``); bounded by the registry.
    func recorder(for request: ProxyRequest) -> EndpointRecorder {
        let (endpoint, configured) = templates.endpoint(of: request)
        return metrics.endpoint(
            upstream: request.upstreamName ?? request.host.lowercasedHost, method: EndpointKey.methodLabel(request.method),
            endpoint: endpoint, configured: configured, maxEndpoints: maxEndpoints
        )
    }
}

/// What is needed to record an exchange once its response body is done.
struct PendingExchange: Sendable {
    let metrics: GatewayMetrics
    let recorder: EndpointRecorder
    let record: ExchangeRecord
    let started: StoredInstant
    var statusClass: StatusClass
    var watchesInjections = false

    func finish(errorCode: GatewayError.Code? = nil) {
        // A response the gateway made in the upstream's place is counted as
        // such, never as the upstream's outcome (requests, errors, /stats).
        if watchesInjections {
            let injections = record.injections
            if !injections.isEmpty {
                metrics.countInjections(injections, endpoint: recorder.key)
                if record.injectedResponse != nil { return }
            }
        }
        let duration = StoredInstant.now - started
        let exchange = CompletedExchange(
            duration: duration,
            statusClass: errorCode == nil ? statusClass : .error,
            errorCode: errorCode,
            attempts: record.attempts,
            clientHTTPVersion: record.clientHTTPVersion
        )
        recorder.record(exchange, at: metrics.now())
    }
}
