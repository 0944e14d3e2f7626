public import GatewayCore
import NIOCore

/// Metrics on the event loop: the endpoint is resolved when the exchange
/// begins, the exchange recorded when it ends.
extension MetricsObserver: ExchangeObserver {
    public func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        MetricsObservation(pending: PendingExchange(
            metrics: metrics, recorder: recorder(for: request), record: context.record, started: context.started, statusClass: .error,
            watchesInjections: watchesInjections
        ))
    }
}

final class MetricsObservation: ExchangeObservation {
    private let pending: PendingExchange

    init(pending: PendingExchange) {
        self.pending = pending
    }

    func requestBodyPart(_ buffer: ByteBuffer) {}

    /// Only the status (at ``finish(_:)``) counts: no copy of the response's fields.

    func finish(_ outcome: ExchangeOutcome) {
        var pending = self.pending
        pending.statusClass = outcome.status.map(StatusClass.init(status:)) ?? .error
        pending.finish(errorCode: outcome.error)
    }

    /// A WebSocket the exchange's 101 opened: counted open under its upstream.
    func tunnelOpened() {
        pending.metrics.webSocketOpened(pending.recorder.key)
    }

    func tunnelClosed(_ summary: TunnelSummary) {
        pending.metrics.webSocketClosed(pending.recorder.key, toUpstream: summary.bytesFromClient, toClient: summary.bytesFromUpstream)
    }
}
