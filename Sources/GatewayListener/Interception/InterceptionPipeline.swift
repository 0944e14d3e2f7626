import NIOCore
import NIOHTTP1
import NIOSSL

/// Turns a client connection that just got `200 Connection Established` into an
/// HTTPS one the gateway terminates:
///
///     before:  timeouts → decoder (CONNECT, stopped) → client handler
///     after:   TLS server → handshake watch → timeouts → new decoder → client handler
///
/// The same ``ClientConnectionHandler`` then reads the requests sent inside the tunnel.
/// Bytes the client sent right after its `CONNECT` (a pipelined ClientHello) are
/// held by the old decoder; they are caught on its removal and fed to the TLS
/// handler.
enum InterceptionPipeline {
    /// Runs on the channel's event loop; `decoder` replaces the one in `handlers`.
    static func install(
        on channel: any Channel,
        pipeline handlers: ClientPipeline,
        decoder: HTTP1RequestDecoder,
        context: NIOSSLContext,
        onHandshakeFailure: @escaping @Sendable (any Error) -> Void
    ) -> EventLoopFuture<Void> {
        let pipeline = channel.pipeline
        let sync = pipeline.syncOperations
        let catcher = LeftoverBytesCatcher()
        do {
            try sync.addHandler(catcher, position: .after(handlers.decoder))
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return sync.removeHandler(handlers.decoder).assumeIsolated().flatMapThrowing {
            let tls = NIOSSLServerHandler(context: context)
            try sync.addHandler(tls, position: .first)
            try sync.addHandler(InterceptionHandshakeHandler(onFailure: onHandshakeFailure), position: .after(tls))
            try sync.addHandler(decoder, position: .after(handlers.timeouts))
        }.flatMap {
            sync.removeHandler(catcher)
        }.map {
            for bytes in catcher.caught {
                pipeline.fireChannelRead(bytes)
            }
            if !catcher.caught.isEmpty { pipeline.fireChannelReadComplete() }
        }.nonisolated()
    }
}

/// Holds raw bytes a removed decoder forwards, so they can be fed in again at
/// the head of the pipeline.
final class LeftoverBytesCatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private(set) var caught: [ByteBuffer] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        caught.append(unwrapInboundIn(data))
    }
}
