import Foundation
import GatewayCore
import NIOConcurrencyHelpers
import NIOHTTP1

/// The exchange state a trace needs once the response is done; ``finish(responseBytes:error:responseHeaders:)``
/// hands it to ``TracePolicy/emit(request:declaredLength:body:context:wallStart:status:responseBytes:error:responseHeaders:)``
/// exactly once (the async chain's; the event loop's is ``TraceObservation``).
final class PendingTrace: Sendable {
    let policy: TracePolicy
    let request: ProxyRequest
    let declaredLength: Int?
    let capture: BodyCapture
    let context: RequestContext
    let wallStart: Date
    private let state = NIOLockedValueBox((status: Int?.none, done: false))

    init(policy: TracePolicy, request: ProxyRequest, declaredLength: Int?, capture: BodyCapture, context: RequestContext, wallStart: Date) {
        self.policy = policy
        self.request = request
        self.declaredLength = declaredLength
        self.capture = capture
        self.context = context
        self.wallStart = wallStart
    }

    var status: Int? {
        get { state.withLockedValue { $0.status } }
        set { state.withLockedValue { $0.status = newValue } }
    }

    /// `responseHeaders`: the response head the client got (nil when none).
    func finish(responseBytes: Int, error: String?, responseHeaders: HTTPHeaders?) {
        let first = state.withLockedValue { s -> Bool in
            defer { s.done = true }
            return !s.done
        }
        guard first else { return }
        policy.emit(
            request: request, declaredLength: declaredLength, body: capture.bytes, context: context, wallStart: wallStart,
            status: status, responseBytes: responseBytes, error: error, responseHeaders: responseHeaders
        )
    }
}
