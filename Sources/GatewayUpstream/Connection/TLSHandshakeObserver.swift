import NIOCore
import NIOSSL
import NIOTLS  // TLSUserEvent; transitive through NIOSSL (Package.swift may list the NIOTLS product explicitly)

/// Sits behind the TLS handler of a new connection until the handshake is done:
/// succeeds its promise on `TLSUserEvent.handshakeCompleted` (keeping the
/// protocol ALPN selected), fails it on an error or a close before that.
final class TLSHandshakeObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<Void>
    /// What the server selected in ALPN (`h2`, `http/1.1`), nil when it selected nothing.
    private(set) var negotiatedProtocol: String?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = tlsEvent {
            negotiatedProtocol = negotiated
            promise.succeed(())
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(ChannelError.eof)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.fail(ChannelError.inappropriateOperationForState)
    }
}
