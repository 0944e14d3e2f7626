public import GatewayConfig
import GatewayCore

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
    private let templates: [String: [CompiledTemplate]]
    private let maxEndpoints: Int

    public init(metrics: GatewayMetrics, config: GatewayConfig) {
        self.metrics = metrics
        metrics.addConfiguredUpstreams(config.upstreams.map(\.name))
        var templates: [String: [CompiledTemplate]] = [:]
        for upstream in config.upstreams where !upstream.endpoints.isEmpty && templates[upstream.name] == nil {
            templates[upstream.name] = upstream.endpoints.map(CompiledTemplate.init)
        }
        self.templates = templates
        self.maxEndpoints = config.metrics.maxEndpointsPerUpstream
    }

    /// The endpoint: configured templates of the request's upstream first, then
    /// automatic normalization; bounded by the registry. Works on the target's
    /// bytes: this runs for every request.
    func recorder(for request: ProxyRequest) -> EndpointRecorder {
        let method = EndpointKey.methodLabel(request.method)
        let upstream = request.upstreamName
        var target = request.target
        let (endpoint, configured) = target.withUTF8 { bytes -> (String, Bool) in
            let path = PathNormalizer.pathPart(of: bytes)
            if let upstream, let candidates = templates[upstream] {
                let methodName = request.method.rawValue
                for candidate in candidates where candidate.matches(method: methodName, path: path) {
                    return (candidate.path, true)
                }
            }
            return (PathNormalizer.normalize(path: path), false)
        }
        return metrics.endpoint(
            upstream: upstream ?? request.host.lowercasedHost, method: method, endpoint: endpoint,
            configured: configured, maxEndpoints: maxEndpoints
        )
    }
}

/// What is needed to record an exchange once its response body is done.
struct PendingExchange: Sendable {
    let metrics: GatewayMetrics
    let recorder: EndpointRecorder
    let record: ExchangeRecord
    let startedAt: ContinuousClock.Instant
    var statusClass: StatusClass

    func finish(errorCode: GatewayError.Code? = nil) {
        let duration = ContinuousClock.now - startedAt
        let exchange = CompletedExchange(
            duration: duration,
            statusClass: errorCode == nil ? statusClass : .error,
            errorCode: errorCode,
            attempts: record.attempts
        )
        recorder.record(exchange, at: metrics.now())
    }
}
