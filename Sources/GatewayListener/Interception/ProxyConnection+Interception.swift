import GatewayCore
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL

/// The host and port of an intercepted `CONNECT`: where every request read
/// inside the tunnel goes (over TLS), whatever its `Host` header says.
struct InterceptedOrigin: Sendable, Equatable {
    let host: String
    let port: Int

    /// A request target read inside the tunnel, as a target of the origin.
    func resolve(_ target: ClientTarget) -> ClientTarget {
        switch target {
        case .origin(let path):
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .absolute(_, _, _, let path):
            // Absolute form inside a tunnel: the tunnel decides where it goes.
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .authority:
            return target
        }
    }
}

extension ProxyConnection {
    /// An intercepted `CONNECT`: answers 200, terminates the client's TLS with a
    /// leaf for `host` minted by the local CA, and goes on reading requests inside.
    func intercept(
        head: HTTPRequestHead,
        host: String,
        port: Int,
        upstream: String,
        interceptor: TLSInterceptor,
        iterator: Inbound.AsyncIterator,
        started: ContinuousClock.Instant,
        logger: Logger,
        outbound: Outbound
    ) async -> Next {
        var iterator = iterator
        // The decoder ends the CONNECT message before it stops parsing.
        guard case .end = try? await iterator.next() else { return .close }
        let context: NIOSSLContext
        do {
            context = try interceptor.serverContext(forHost: host, upstream: upstream)
        } catch {
            logger.error("could not mint an interception certificate for \(host): \(error)")
            let failure = GatewayError(.interceptionFailed, "the gateway could not make a certificate for \(host)", upstream: "\(host):\(port)", cause: error)
            await refuse(failure, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }
        let handlers: ProxyChannelSetup.HTTPHandlers
        do {
            try await outbound.write(contentsOf: Self.connectionEstablished(version: head.version))
            handlers = try await InterceptionPipeline.install(
                on: channel,
                httpHandlers: httpHandlers,
                context: context,
                onHandshakeFailure: { error in interceptor.handshakeFailed(host: host, upstream: upstream, error: error) }
            )
        } catch {
            logger.debug("could not start intercepting", metadata: ["host": "\(host)", "error": "\(error)"])
            return .close
        }
        logger.debug("CONNECT \(host):\(port) intercepted", metadata: ["upstream": "\(upstream)"])
        return .intercepted(iterator, InterceptedOrigin(host: host, port: port), handlers)
    }
}
