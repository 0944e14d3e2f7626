import GatewayCore
import NIOCore

/// The request side of one exchange, handed to its delegate: calls for an
/// exchange that has ended are refused (they cannot reach the next one), as
/// the handler's state machine checks the exchange id each carries. A value
/// (a reference and an id): handing it over allocates nothing.
struct ExchangeWriter: UpstreamRequestWriter {
    private let handler: UpstreamExchangeHandler
    private let exchangeID: Int

    init(handler: UpstreamExchangeHandler, exchangeID: Int) {
        self.handler = handler
        self.exchangeID = exchangeID
    }

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        handler.writeBodyPart(chunk, isLast: isLast, exchangeID: exchangeID)
    }

    func endRequest() -> EventLoopFuture<Void> {
        handler.endRequest(exchangeID: exchangeID)
    }

    func abort(_ error: any Error) {
        handler.abort(exchangeID: exchangeID, error: error)
    }

    func resumeReading() {
        handler.consumerDemand(exchangeID: exchangeID)
    }
}
