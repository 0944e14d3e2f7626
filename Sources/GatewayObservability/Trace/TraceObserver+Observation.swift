public import GatewayCore
import Foundation
import NIOCore

/// Traces on the event loop: the request as routed (before credentials), its
/// body copied as it passes (up to ``TraceObserver/teeLimit``), one record when
/// the exchange ends.
extension TraceObserver: ExchangeObserver {
    public func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        TraceObservation(observer: self, request: request, context: context)
    }
}

/// One traced exchange on its connection's event loop, which alone calls it
/// (``ExchangeObservation``): its state is plain fields, no lock, one object
/// per exchange.
final class TraceObservation: ExchangeObservation {
    private let observer: TraceObserver
    /// The request as routed, body left out.
    private let request: ProxyRequest
    private let declaredLength: Int?
    private let context: RequestContext
    private let wallStart: Date
    /// The body as captured so far; nil until a part comes (or when it overflowed).
    private var body: [UInt8]?
    private var overflow = false
    /// The response head the client got: the fields (detached from the read
    /// buffer, still bytes) and the gateway's `Via` after them.
    private var responseFields: ResponseFields?
    private var responseVia: String?
    private var finished = false

    init(observer: TraceObserver, request: ProxyRequest, context: RequestContext) {
        var snapshot = request
        snapshot.body = .empty
        self.observer = observer
        self.request = snapshot
        self.declaredLength = request.body.declaredLength
        self.context = context
        self.wallStart = Date()
        if case .empty = request.body.storage { body = [] }
    }

    func requestBodyPart(_ buffer: ByteBuffer) {
        guard !overflow else { return }
        if (body?.count ?? 0) + buffer.readableBytes > TraceObserver.teeLimit {
            overflow = true
            body = nil
            return
        }
        if body == nil { body = [] }
        body!.append(contentsOf: buffer.readableBytesView)
    }

    func responseHead(status: Int, fields: ResponseFields, via: String?) {
        // Copied, not made strings: the writer thread writes the record's fields from the bytes.
        responseFields = fields.detached()
        responseVia = via
    }

    func finish(_ outcome: ExchangeOutcome) {
        guard !finished else { return }
        finished = true
        // A teed body is complete: an empty one is `[]`, an overflowed one stays nil.
        if !overflow && body == nil { body = [] }
        observer.emit(
            request: request, declaredLength: declaredLength, body: overflow ? nil : body, context: context, wallStart: wallStart,
            status: outcome.status, responseBytes: outcome.responseBytes,
            error: outcome.error?.rawValue ?? (outcome.cancelled ? "cancelled" : nil),
            responseFields: responseFields, responseVia: responseVia
        )
    }
}
