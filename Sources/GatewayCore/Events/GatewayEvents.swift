/// Events the layers report for metrics, without depending on a metrics backend.
/// Observability implements it with Prometheus; tests use a recorder; the
/// default does nothing. Implementations must be cheap and never block.
public protocol GatewayEvents: Sendable {
    /// A pinned upstream presented no key matching its pins.
    func pinFailure(host: String, upstream: String?, mode: PinMode)
    /// An upstream connection was opened (after connect and TLS) or closed.
    func upstreamConnectionOpened(host: String, port: Int)
    func upstreamConnectionClosed(host: String, port: Int)
}

extension GatewayEvents {
    public func pinFailure(host: String, upstream: String?, mode: PinMode) {}
    public func upstreamConnectionOpened(host: String, port: Int) {}
    public func upstreamConnectionClosed(host: String, port: Int) {}
}

/// Discards every event.
public struct NoGatewayEvents: GatewayEvents {
    public init() {}
}
