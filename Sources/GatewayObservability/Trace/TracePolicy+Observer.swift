public import GatewayCore
import Foundation
import NIOCore
public import NIOHTTP1

/// Traces on the event loop: the request as routed (before credentials), its
/// body copied as it passes (up to ``TracePolicy/teeLimit``), one record when
/// the exchange ends.
extension TracePolicy: ExchangeObserver {
    public func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        let capture = BodyCapture()
        var snapshot = request
        snapshot.body = .empty
        if case .empty = request.body.storage { capture.set([]) }
        let pending = PendingTrace(
            policy: self, request: snapshot, declaredLength: request.body.declaredLength, capture: capture, context: context, wallStart: Date()
        )
        return TraceObservation(pending: pending, capture: capture)
    }
}

final class TraceObservation: ExchangeObservation {
    private let pending: PendingTrace
    private let capture: BodyCapture
    /// The response head the client got; kept here (the connection's event loop owns the observation): no lock.
    private var responseHeaders: HTTPHeaders?

    init(pending: PendingTrace, capture: BodyCapture) {
        self.pending = pending
        self.capture = capture
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        capture.append(buffer, limit: TracePolicy.teeLimit)
    }

    func responseHead(status: Int, headers: HTTPHeaders) {
        responseHeaders = headers
    }

    func finish(_ outcome: ExchangeOutcome) {
        capture.complete()
        pending.status = outcome.status
        pending.finish(
            responseBytes: outcome.responseBytes, error: outcome.error?.rawValue ?? (outcome.cancelled ? "cancelled" : nil), responseHeaders: responseHeaders
        )
    }
}
