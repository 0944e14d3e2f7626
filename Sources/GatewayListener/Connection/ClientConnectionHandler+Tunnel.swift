import GatewayCore
import NIOCore

/// The switch from HTTP to a tunnel: after a `CONNECT`'s 200, or a WebSocket
/// handshake's 101. This handler (and with it the framer and the timeouts)
/// leaves the client's pipeline, a ``TunnelHandler`` pair splices the client's
/// channel with the peer's (both on this loop), and the bytes the framer held
/// unparsed (sent right after the request) go through first.
extension ClientConnectionHandler {
    /// What a tunnel carried, for its log line and observers.
    struct TunnelTotals {
        let bytesFromClient: Int
        let bytesFromPeer: Int
    }

    /// Writes `first` to the client (the answer that opens the tunnel, then
    /// any bytes the peer sent with it), then replaces the HTTP handlers with
    /// a tunnel to `peer`. `closed` runs on this loop once both sides closed.
    /// Returns false (and closes both) when the client is gone already.
    @discardableResult
    func switchToTunnel(peer: any Channel, first: [ByteBuffer], closed: @escaping (TunnelTotals) -> Void) -> Bool {
        machine.handOver()
        guard let context, context.channel.isActive else {
            peer.close(promise: nil)
            closed(TunnelTotals(bytesFromClient: 0, bytesFromPeer: 0))
            return false
        }
        for buffer in first { context.write(wrapOutboundOut(buffer), promise: nil) }
        context.flush()
        let idleTimeout = TimeAmount(environment.liveConfig.current.config.limits.tunnelIdleTimeout)
        let (clientGlue, peerGlue) = TunnelHandler.pair(idleTimeout: idleTimeout)
        let pipeline = context.pipeline
        let sync = pipeline.syncOperations
        let unparsed = stopFraming()
        let client = context.channel
        client.closeFuture.and(peer.closeFuture).assumeIsolated().whenComplete { _ in
            closed(TunnelTotals(bytesFromClient: clientGlue.bytesRead, bytesFromPeer: peerGlue.bytesRead))
        }
        do {
            try sync.addHandler(clientGlue, position: .after(self))
            try peer.pipeline.syncOperations.addHandler(peerGlue)
        } catch {
            peer.close(promise: nil)
            context.close(promise: nil)
            return false
        }
        // The drain timeout closes a tunnel (its handler, this one, is gone by then).
        if let trackingID {
            environment.tracker.setCallbacks(trackingID, ConnectionTracker.Callbacks(
                drain: {},
                abort: { client.close(promise: nil) }
            ))
        }
        // Bytes the client sent right after its request go through the tunnel first.
        if let unparsed {
            context.fireChannelRead(NIOAny(unparsed))
            context.fireChannelReadComplete()
        }
        sync.removeHandler(self)
            .flatMap { client.setOption(ChannelOptions.allowRemoteHalfClosure, value: true) }
            .flatMap { peer.setOption(ChannelOptions.autoRead, value: true) }
            .whenComplete { result in
                guard case .success = result else {
                    peer.close(promise: nil)
                    client.close(promise: nil)
                    return
                }
                peer.read()
                client.read()  // a read the HTTP handler held went with it
            }
        return true
    }
}
