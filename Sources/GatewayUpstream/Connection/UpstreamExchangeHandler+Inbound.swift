import NIOCore
import NIOHTTP1

/// The response side and the channel's events, fed to the machine: head, body
/// parts, end, errors, close, and the reads held while the delegate cannot take more.
extension UpstreamExchangeHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            run(machine.responseHead(head, now: eventLoop.now))
        case .body(let chunk):
            run(machine.responseBodyPart(chunk, now: eventLoop.now))
        case .end:
            run(machine.responseEnd())
        }
    }

    /// One read's parts are in: the delegate flushes them to its client at once.
    func channelReadComplete(context: ChannelHandlerContext) {
        if machine.isStreamingResponse { active?.delegate.upstreamReadComplete() }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        markClosed()
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    /// Holds the read while the delegate cannot take more; its demand releases it.
    func read(context: ChannelHandlerContext) {
        // The delegate is asked only while a response streams to it.
        let paused = machine.isStreamingResponse && (active?.delegate.upstreamShouldPauseReading ?? false)
        run(machine.readRequested(consumerPaused: paused))
    }

    /// The delegate can take more of the response.
    func consumerDemand(exchangeID: Int) {
        run(machine.consumerDemand(exchangeID: exchangeID, now: eventLoop.now))
    }
}
