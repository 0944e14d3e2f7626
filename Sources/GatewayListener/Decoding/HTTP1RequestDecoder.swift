import GatewayCore
package import NIOCore

/// The client connection's request decoder: raw bytes in, ``ClientRequestPart``s
/// out, framed by ``HTTP1RequestFramer``. A malformed head or body is passed on
/// as a ``GatewayError`` (`errorCaught`), for the connection handler to answer.
///
/// Removed after an upgrade-like request (a tunnel, interception's TLS), it
/// passes on the bytes that followed the request, unparsed, before it leaves.
package final class HTTP1RequestDecoder: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias InboundOut = ClientRequestPart

    private var framer: HTTP1RequestFramer
    /// Parts are being handed on: a removal asked for meanwhile waits for the end of it.
    private var handingOn = false
    private var pendingRemoval: ChannelHandlerContext.RemovalToken?

    package init(maxHeadBytes: Int) {
        framer = HTTP1RequestFramer(maxHeadBytes: maxHeadBytes)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        framer.append(unwrapInboundIn(data))
        handingOn = true
        do {
            while pendingRemoval == nil, let part = try framer.next() {
                context.fireChannelRead(wrapInboundOut(part))
            }
        } catch {
            context.fireErrorCaught(error)
        }
        handingOn = false
        if let token = pendingRemoval {
            pendingRemoval = nil
            leave(context: context, removalToken: token)
        }
    }

    package func removeHandler(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        guard !handingOn else {
            pendingRemoval = removalToken
            return
        }
        leave(context: context, removalToken: removalToken)
    }

    private func leave(context: ChannelHandlerContext, removalToken: ChannelHandlerContext.RemovalToken) {
        if let unparsed = framer.takeUnparsed() {
            context.fireChannelRead(NIOAny(unparsed))
        }
        context.leavePipeline(removalToken: removalToken)
    }
}
