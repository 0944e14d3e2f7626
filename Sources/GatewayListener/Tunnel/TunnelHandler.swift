import NIOCore

/// One side of a blind `CONNECT` tunnel (the client's channel or the
/// upstream's, both on one event loop), run by its ``TunnelStateMachine``:
/// bytes read here are written to the peer side and flushed when the read
/// completes, with back-pressure by holding `read()` while the peer is not
/// writable. Both sides share a ``TunnelIdleTimer``: no byte either way for
/// `limits.tunnel_idle_timeout` closes the tunnel.
final class TunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var machine = TunnelStateMachine()
    private var peer: TunnelHandler?
    private var context: ChannelHandlerContext?
    private let idle: TunnelIdleTimer

    var bytesRead: Int { machine.bytesRead }

    private init(idle: TunnelIdleTimer) {
        self.idle = idle
    }

    /// The two sides of one tunnel, sharing its idle timer.
    static func pair(idleTimeout: TimeAmount) -> (client: TunnelHandler, upstream: TunnelHandler) {
        let idle = TunnelIdleTimer(timeout: idleTimeout)
        let client = TunnelHandler(idle: idle)
        let upstream = TunnelHandler(idle: idle)
        client.peer = upstream
        upstream.peer = client
        idle.onExpiry = { [weak client] in client?.close() }
        return (client, upstream)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        idle.start(on: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        peer = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard machine.bytesArrived(buffer.readableBytes) else { return }
        idle.activity(now: context.eventLoop.now)
        peer?.context?.write(NIOAny(buffer), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        peer?.context?.flush()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, case .inputClosed = event else {
            return context.fireUserInboundEventTriggered(event)
        }
        run(machine.inputClosed())
    }

    func channelInactive(context: ChannelHandlerContext) {
        run(machine.closed())
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        run(machine.closed())
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { peer?.peerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    // MARK: Outbound

    func read(context: ChannelHandlerContext) {
        if machine.readRequested(peerWritable: peer?.context?.channel.isWritable ?? false) == .read {
            context.read()
        }
    }

    // MARK: Actions

    private func peerBecameWritable() {
        if machine.peerBecameWritable() == .read { context?.read() }
    }

    /// Closes both sides (idle timeout, or the other side is gone).
    func close() {
        run(machine.closed())
    }

    private func run(_ action: TunnelStateMachine.CloseAction) {
        switch action {
        case .shutdownPeerOutput:
            peer?.context?.close(mode: .output, promise: nil)
        case .closeBoth:
            idle.stop()
            let peer = self.peer
            context?.close(promise: nil)
            peer?.close()
        case .none:
            break
        }
    }
}
