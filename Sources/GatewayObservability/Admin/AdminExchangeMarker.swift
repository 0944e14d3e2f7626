import NIOCore
import NIOHTTP1

/// Tells an admin connection's ``AdminTimeoutHandler`` where its exchange
/// stands: a whole request arrived (its `.end` read), or the response's `.end`
/// was written. Sits after the HTTP server handlers, where requests and
/// responses are parts; both handlers are created together for one connection
/// and run on its event loop.
final class AdminExchangeMarker: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let timeouts: AdminTimeoutHandler

    init(timeouts: AdminTimeoutHandler) {
        self.timeouts = timeouts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { timeouts.requestReceived() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // Reported before it is passed on: once a response's end is written,
        // HTTPServerPipelineHandler hands on a pipelined request at once, and
        // that request's arrival must come after this.
        if case .end = unwrapOutboundIn(data) { timeouts.responseSent() }
        context.write(data, promise: promise)
    }
}
