import GatewayCore
import NIOCore
import NIOSSL

/// Turns a client connection that just got `200 Connection Established` into an
/// HTTPS one the gateway terminates:
///
///     before:  client handler (CONNECT; its framer stopped after it)
///     after:   TLS server → record coalescer → handshake watch → client handler (a fresh framer)
///
/// The same ``ClientConnectionHandler`` then reads the requests sent inside the
/// tunnel. Bytes the client sent right after its `CONNECT` (a pipelined
/// ClientHello), which the framer kept unparsed, are fed in again at the head
/// of the pipeline, through TLS.
enum InterceptionPipeline {
    /// Runs on the channel's event loop.
    static func install(
        on channel: any Channel,
        leftover: ByteBuffer?,
        context: NIOSSLContext,
        onHandshakeFailure: @escaping @Sendable (any Error) -> Void
    ) throws {
        let pipeline = channel.pipeline
        let sync = pipeline.syncOperations
        let tls = NIOSSLServerHandler(context: context)
        try sync.addHandler(tls, position: .first)
        // One TLS record per flush, not one per write (an HTTP/2 frame, a head, a chunk).
        let coalescer = TLSRecordCoalescer()
        try sync.addHandler(coalescer, position: .after(tls))
        try sync.addHandler(InterceptionHandshakeHandler(onFailure: onHandshakeFailure), position: .after(coalescer))
        if let leftover {
            sync.fireChannelRead(NIOAny(leftover))
            sync.fireChannelReadComplete()
        }
    }
}
