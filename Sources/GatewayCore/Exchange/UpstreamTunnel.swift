public import NIOCore

/// An upstream connection that answered `101 Switching Protocols` to a
/// WebSocket handshake: it left the pool and its HTTP handler, and is now a
/// byte stream for the client's side of a tunnel. `channel` is on the event
/// loop of the exchange that asked for it.
public struct UpstreamTunnel: Sendable {
    public let channel: any Channel
    /// Bytes the upstream sent right after the 101 head, read with it (the
    /// first WebSocket frames): they go to the client before anything else.
    public let leftover: ByteBuffer?

    public init(channel: any Channel, leftover: ByteBuffer?) {
        self.channel = channel
        self.leftover = leftover
    }
}

extension UpstreamAttemptDelegate {
    /// Receivers that never ask for an upgrade close the connection.
    public func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        tunnel.channel.close(promise: nil)
        upstreamAttemptFailed(GatewayError(.upstreamProtocolError, "the upstream switched protocols unasked"))
    }
}
