import NIOCore
import NIOHTTP1
import NIOSSL

/// Turns a client connection that just got `200 Connection Established` into an
/// HTTPS one the gateway terminates:
///
///     before:  timeouts → encoder → decoder (CONNECT, stopped) → observer → async channel
///     after:   TLS server → handshake watch → timeouts → encoder → new decoder → observer → async channel
///
/// The same `NIOAsyncChannel` then reads the requests sent inside the tunnel.
/// Bytes the client sent right after its `CONNECT` (a pipelined ClientHello) are
/// held by the old decoder; they are caught on its removal and fed to the TLS
/// handler.
enum InterceptionPipeline {
    static func install(
        on channel: any Channel,
        httpHandlers: ProxyChannelSetup.HTTPHandlers,
        context: NIOSSLContext,
        onHandshakeFailure: @escaping @Sendable (any Error) -> Void
    ) async throws -> ProxyChannelSetup.HTTPHandlers {
        try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<ProxyChannelSetup.HTTPHandlers> in
            let pipeline = channel.pipeline
            let sync = pipeline.syncOperations
            let catcher = LeftoverBytesCatcher()
            let decoder = ProxyChannelSetup.makeDecoder(maxHeadBytes: httpHandlers.maxHeadBytes)
            do {
                try sync.addHandler(catcher, position: .after(httpHandlers.decoder))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return sync.removeHandler(httpHandlers.decoder).assumeIsolated().flatMapThrowing {
                let tls = NIOSSLServerHandler(context: context)
                try sync.addHandler(tls, position: .first)
                try sync.addHandler(InterceptionHandshakeHandler(onFailure: onHandshakeFailure), position: .after(tls))
                try sync.addHandler(decoder, position: .after(httpHandlers.encoder))
            }.flatMap {
                sync.removeHandler(catcher)
            }.map { () -> ProxyChannelSetup.HTTPHandlers in
                for bytes in catcher.caught {
                    pipeline.fireChannelRead(NIOAny(bytes))
                }
                if !catcher.caught.isEmpty { pipeline.fireChannelReadComplete() }
                return ProxyChannelSetup.HTTPHandlers(
                    timeouts: httpHandlers.timeouts,
                    encoder: httpHandlers.encoder,
                    decoder: decoder,
                    observer: httpHandlers.observer,
                    signal: httpHandlers.signal,
                    maxHeadBytes: httpHandlers.maxHeadBytes
                )
            }.nonisolated()
        }.get()
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
