import Prometheus

/// Every metric family the gateway exports: name, type, help text and label
/// names, in one place. DESIGN.md's names; `dashboards/gateway.json` uses
/// exactly these (a test checks it against a live scrape). Change a name only
/// together with the dashboard.
///
/// swift-prometheus `fatalError`s when one name is registered with another help
/// text or other buckets, and treats the same labels in another order as a new
/// series: handles are therefore made only through `labels(_:)` of the family.
public struct MetricFamily: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    /// The full name (`gateway_requests_total`).
    public let name: String
    public let kind: Kind
    public let help: String
    /// Label names, in the one order every series of the family uses.
    public let labelNames: [String]

    /// The descriptor swift-prometheus wants: namespace `gateway`, the rest as metric name.
    var descriptor: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "gateway", metricName: String(name.dropFirst("gateway_".count)), unitName: "", helpText: help)
    }

    /// Pairs label names with `values` in the family's order.
    func labels(_ values: [String]) -> [(String, String)] {
        precondition(values.count == labelNames.count, "\(name) takes labels \(labelNames)")
        return Array(zip(labelNames, values))
    }

    /// Latency buckets in seconds: 1 ms to 30 s, within 10% from 50 ms to 5 s (``LatencyBuckets``).
    public static let latencyBuckets: [Double] = LatencyBuckets.bounds

    // MARK: Per endpoint (recorded by MetricsObserver)

    public static let requests = MetricFamily(
        name: "gateway_requests_total", kind: .counter,
        help: "Client requests by upstream, endpoint template, method and status class (error: the gateway answered with an error of its own)",
        labelNames: ["upstream", "endpoint", "method", "status_class"])
    public static let requestErrors = MetricFamily(
        name: "gateway_request_errors_total", kind: .counter,
        help: "Client requests the gateway answered with an error of its own, by error code (X-Gateway-Error)",
        labelNames: ["upstream", "endpoint", "method", "code"])
    public static let requestDuration = MetricFamily(
        name: "gateway_request_duration_seconds", kind: .histogram,
        help: "Client-visible request duration, from the request head to the end of the response body",
        labelNames: ["upstream", "endpoint", "method"])
    public static let upstreamAttempts = MetricFamily(
        name: "gateway_upstream_attempts_total", kind: .counter,
        help: "Upstream attempts (a retried request makes several) by outcome",
        labelNames: ["upstream", "endpoint", "method", "status_class"])
    public static let upstreamPhase = MetricFamily(
        name: "gateway_upstream_phase_seconds", kind: .histogram,
        help: "Upstream attempt phases: connect (with DNS) and tls on new connections only, ttfb and total on every attempt",
        labelNames: ["upstream", "endpoint", "method", "phase"])

    // MARK: Events from other layers

    public static let retries = MetricFamily(
        name: "gateway_retries_total", kind: .counter,
        help: "Requests sent again to an upstream, by reason",
        labelNames: ["upstream", "reason"])
    public static let tokenRefreshes = MetricFamily(
        name: "gateway_token_refreshes_total", kind: .counter,
        help: "Token refreshes by trigger and result",
        labelNames: ["upstream", "trigger", "result"])
    public static let rateLimited = MetricFamily(
        name: "gateway_rate_limited_total", kind: .counter,
        help: "Rate-limited requests: source local (the gateway's own limit) or upstream (the upstream answered 429)",
        labelNames: ["upstream", "source"])
    public static let queuedRequests = MetricFamily(
        name: "gateway_queued_requests", kind: .gauge,
        help: "Requests waiting in the gateway (rate-limit queue) per upstream",
        labelNames: ["upstream"])
    public static let pinFailures = MetricFamily(
        name: "gateway_pin_failures_total", kind: .counter,
        help: "Upstream TLS connections whose certificate chain matched no configured pin",
        labelNames: ["upstream", "mode"])
    public static let interceptionCertificates = MetricFamily(
        name: "gateway_interception_certificates_total", kind: .counter,
        help: "Leaf certificates for intercepted CONNECTs: result minted (a new leaf) or cached",
        labelNames: ["upstream", "result"])
    public static let interceptionHandshakeFailures = MetricFamily(
        name: "gateway_interception_handshake_failures_total", kind: .counter,
        help: "Client TLS handshakes with the gateway that failed on intercepted CONNECTs; reason untrusted_ca means the client does not trust the gateway's CA",
        labelNames: ["upstream", "reason"])
    public static let webSocketsOpen = MetricFamily(
        name: "gateway_websockets_open", kind: .gauge,
        help: "WebSockets open through the gateway (handshakes answered 101, until either side closes)",
        labelNames: ["upstream"])
    public static let webSocketBytes = MetricFamily(
        name: "gateway_websocket_bytes_total", kind: .counter,
        help: "Bytes carried by closed WebSockets, by endpoint of the handshake and direction (to_upstream: sent by the client; to_client: sent by the upstream)",
        labelNames: ["upstream", "endpoint", "direction"])
    public static let upstreamConnections = MetricFamily(
        name: "gateway_upstream_connections_open", kind: .gauge,
        help: "Open upstream connections, by protocol (http/1.1, h2)",
        labelNames: ["protocol"])
    public static let requestsByProtocol = MetricFamily(
        name: "gateway_requests_by_protocol_total", kind: .counter,
        help: "Client requests by the protocol the client spoke (http/1.1; h2 inside interception) and the one its last upstream attempt spoke (http/1.1, h2; none without an attempt)",
        labelNames: ["upstream", "client_protocol", "upstream_protocol"])
    public static let clientConnections = MetricFamily(
        name: "gateway_client_connections_open", kind: .gauge,
        help: "Open client connections to the proxy port",
        labelNames: [])
    public static let clientConnectionsRefused = MetricFamily(
        name: "gateway_client_connections_refused_total", kind: .counter,
        help: "Client connections closed at once: reason max_client_connections (that many were open), max_connections_per_client (that many from one address), setup_failed (accepted but could not be set up) or accept_failed (accept itself failed, e.g. out of descriptors)",
        labelNames: ["reason"])
    public static let sharedStateUp = MetricFamily(
        name: "gateway_shared_state_up", kind: .gauge,
        help: "1 while the shared state database (shared_state.postgres) answers, 0 while it does not; absent without shared_state",
        labelNames: [])
    public static let traceSpansDropped = MetricFamily(
        name: "gateway_trace_spans_dropped_total", kind: .counter,
        help: "OpenTelemetry spans not exported (tracing on): reason queue_full (more spans waiting than tracing.max_queue) or export_failed (the collector did not take a batch)",
        labelNames: ["reason"])
    public static let faultsInjected = MetricFamily(
        name: "gateway_faults_injected_total", kind: .counter,
        help: "Faults the gateway injected (faults rules): kind error, latency or reset; never counted as the upstream's own outcome",
        labelNames: ["upstream", "endpoint", "kind"])
    public static let mockedResponses = MetricFamily(
        name: "gateway_mocked_responses_total", kind: .counter,
        help: "Responses the gateway gave in the upstream's place from a mock rule or a replayed HAR entry; nothing reached the network",
        labelNames: ["upstream", "endpoint"])
    public static let clientCertificateExpiry = MetricFamily(
        name: "gateway_upstream_client_certificate_expiry_seconds", kind: .gauge,
        help: "When the client certificate an upstream's tls.client_certificate presents expires (its notAfter), in Unix seconds; alert on this minus time()",
        labelNames: ["upstream"])
    public static let buildInfo = MetricFamily(
        name: "gateway_build_info", kind: .gauge,
        help: "Build information",
        labelNames: ["version"])

    /// Every family, for the exposition of families with no series yet.
    public static let all: [MetricFamily] = [
        requests, requestErrors, requestDuration, upstreamAttempts, upstreamPhase,
        retries, tokenRefreshes, rateLimited, queuedRequests, pinFailures,
        interceptionCertificates, interceptionHandshakeFailures, webSocketsOpen, webSocketBytes,
        requestsByProtocol, upstreamConnections, clientConnections, clientConnectionsRefused, sharedStateUp, traceSpansDropped, buildInfo,
        faultsInjected, mockedResponses, clientCertificateExpiry,
    ]
}
