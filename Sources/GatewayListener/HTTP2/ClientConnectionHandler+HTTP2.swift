import GatewayCore
import NIOCore
import NIOHTTP2
import NIOTLS

/// An intercepted client that chose `h2` in its TLS handshake (ALPN) speaks
/// HTTP/2 from then on: at the end of the handshake, before any application
/// byte, the HTTP/1.1 handlers leave the pipeline and HTTP/2's take their place:
///
///     before:  TLS → handshake watch → client handler
///     after:   TLS → handshake watch → NIOHTTP2Handler → HTTP/2 connection (its streams in a table)
///
/// Plain-HTTP proxy clients stay on HTTP/1.1 (no ALPN there, and no h2c upgrade).
extension ClientConnectionHandler {
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let tls = event as? TLSUserEvent, case .handshakeCompleted(let negotiated) = tls, negotiated == "h2" {
            return switchToHTTP2(context)  // nothing after this handler waits for the event
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func switchToHTTP2(_ context: ChannelHandlerContext) {
        guard let origin else {
            // Not inside interception (cannot happen: only intercepted TLS offers h2).
            context.close(promise: nil)
            return
        }
        let environment = self.environment
        let clientAddress = self.clientAddress
        let limits = environment.liveConfig.current.config.limits
        let connection = ClientHTTP2ConnectionHandler(
            environment: environment, origin: origin, clientAddress: clientAddress,
            idleTimeout: .nanoseconds(Int64(limits.idleTimeout.seconds * 1e9)), eventLoop: context.eventLoop
        )
        // The settings live in HTTP2ServerSettings, shared with the http2-frames fuzz target.
        // No stream multiplexer: the connection's handler drives the streams.
        let http2 = NIOHTTP2Handler(
            mode: .server,
            connectionConfiguration: HTTP2ServerSettings.connection(maxHeaderListSize: environment.maxHeadBytes),
            streamConfiguration: HTTP2ServerSettings.stream
        )
        let sync = context.pipeline.syncOperations
        do {
            try sync.addHandlers([http2, connection], position: .before(self))
        } catch {
            environment.logger.debug("could not start HTTP/2", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
            context.close(promise: nil)
            return
        }
        _ = stopFraming()  // nothing was framed yet: ALPN chose h2 before any application byte
        if let trackingID {
            let bound = NIOLoopBound(connection, eventLoop: context.eventLoop)
            environment.tracker.setCallbacks(trackingID, ConnectionTracker.Callbacks(
                drain: { bound.eventLoop.execute { bound.value.drain() } },
                abort: { bound.eventLoop.execute { bound.value.abort() } }
            ))
            if environment.tracker.isDraining { connection.drain() }
        }
        sync.removeHandler(context: context, promise: nil)
    }
}
