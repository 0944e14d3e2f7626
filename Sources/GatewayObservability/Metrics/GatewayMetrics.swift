public import GatewayCore
import NIOConcurrencyHelpers
public import Prometheus

/// The gateway's Prometheus metrics (names as in DESIGN.md; the dashboards rely
/// on them). Receives events from the layers through `GatewayEvents`, and the
/// end of each exchange from the listener/policy chain.
public final class GatewayMetrics: GatewayEvents, Sendable {
    public let registry: PrometheusCollectorRegistry
    private let openConnections: Gauge
    private let counters = NIOLockedValueBox<[String: Counter]>([:])

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), version: String = GatewayVersion.current) {
        self.registry = registry
        self.openConnections = registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "gateway", metricName: "upstream_connections", unitName: "open", helpText: "Open upstream connections")
        )
        registry.makeGauge(
            descriptor: MetricNameDescriptor(namespace: "gateway", metricName: "build", unitName: "info", helpText: "Build information"),
            labels: [("version", version)]
        ).set(1 as Int64)
    }

    public func pinFailure(host: String, upstream: String?, mode: PinMode) {
        pinFailureCounter(host: upstream ?? host, mode: mode).increment()
    }

    public func upstreamConnectionOpened(host: String, port: Int) {
        openConnections.increment()
    }

    public func upstreamConnectionClosed(host: String, port: Int) {
        openConnections.decrement()
    }

    /// The exposition text for `/metrics`.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    private func pinFailureCounter(host: String, mode: PinMode) -> Counter {
        let key = "pin|\(host)|\(mode.rawValue)"
        if let counter = counters.withLockedValue({ $0[key] }) { return counter }
        let descriptor = MetricNameDescriptor(namespace: "gateway", metricName: "pin_failures", unitName: "total", helpText: "Upstream TLS connections whose certificate chain matched no configured pin")
        let counter = registry.makeCounter(descriptor: descriptor, labels: [("upstream", host), ("mode", mode.rawValue)])
        counters.withLockedValue { $0[key] = counter }
        return counter
    }
}

/// The gateway's version string.
public enum GatewayVersion {
    public static let current = "0.1.0"
}
