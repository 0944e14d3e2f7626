import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sits first in a pipeline (next to the socket) and, on ``AbruptCloseHandler/Event``, closes the
/// socket with `SO_LINGER {1, 0}` so the kernel sends a TCP RST.
///
/// Being first, it bypasses handlers such as `NIOSSLHandler` that would otherwise turn a close
/// into an orderly TLS shutdown.
final class AbruptCloseHandler: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    /// Trigger with `channel.triggerUserOutboundEvent(AbruptCloseHandler.Event())`.
    struct Event: Sendable {}

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Event else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        Self.resetSocket(context: context, promise: promise)
    }

    /// Sets `SO_LINGER {1, 0}` and closes from `context`, towards the socket.
    static func resetSocket(context: ChannelHandlerContext, promise: EventLoopPromise<Void>?) {
        // On the event loop this sets the option at once; without it the close is a FIN.
        _ = (context.channel as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0))
        context.close(promise: promise)
    }
}

extension Channel {
    /// Closes this channel with a TCP RST, if an ``AbruptCloseHandler`` is in its pipeline;
    /// otherwise sets `SO_LINGER {1, 0}` and closes normally.
    func resetConnection() async {
        do {
            try await self.triggerUserOutboundEvent(AbruptCloseHandler.Event())
        } catch {
            try? await (self as? any SocketOptionProvider)?.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            try? await self.close()
        }
    }
}
