import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1

extension ProxyConnection {
    /// `CONNECT host:port`: checks the port and host, connects, answers 200 and
    /// splices the two sockets. The connection is not used for HTTP afterwards.
    /// A host of an upstream with `intercept: true` is intercepted instead.
    func tunnel(
        head: HTTPRequestHead,
        host: String,
        port: Int,
        iterator: Inbound.AsyncIterator,
        active: ActiveConfig,
        started: ContinuousClock.Instant,
        logger: Logger,
        outbound: Outbound
    ) async -> Next {
        let config = active.config
        let upstream = "\(host):\(port)"
        guard config.access.connectPorts.contains(port) else {
            let error = GatewayError(.portNotAllowed, "CONNECT to port \(port) is not allowed (allowed: \(config.access.connectPorts.map(String.init).joined(separator: ", ")))", upstream: upstream)
            await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }
        guard config.access.isAllowed(host: host) else {
            let error = GatewayError(.hostNotAllowed, "the gateway's access rules do not allow \(host)", upstream: upstream)
            await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }
        if let interceptor = active.interceptor, let upstreamConfig = config.upstream(forHost: host), upstreamConfig.intercept {
            return await intercept(
                head: head, host: host, port: port, upstream: upstreamConfig.name, interceptor: interceptor,
                iterator: iterator, started: started, logger: logger, outbound: outbound
            )
        }
        let tunnel = ConnectTunnel(host: host, port: port, connectTimeout: .nanoseconds(Int64(config.pool.connectTimeout.seconds * 1e9)))
        let peer: any Channel
        do {
            peer = try await tunnel.connect(on: channel.eventLoop)
        } catch {
            await refuse(error, head: head, started: started, logger: logger, outbound: outbound)
            return .close
        }
        do {
            try await outbound.write(contentsOf: Self.connectionEstablished(version: head.version))
            let outcome = try await tunnel.splice(client: channel, httpHandlers: httpHandlers, peer: peer)
            logger.info(
                "CONNECT \(upstream) 200",
                metadata: [
                    "ms": "\(((ContinuousClock.now - started).seconds * 100_000).rounded() / 100)",
                    "bytes_in": "\(outcome.bytesFromClient)",
                    "bytes_out": "\(outcome.bytesFromUpstream)",
                ]
            )
        } catch {
            peer.close(promise: nil)
            logger.debug("tunnel ended with an error", metadata: ["error": "\(error)"])
        }
        return .close
    }
}

extension ProxyConnection {
    /// `200 Connection Established`, the answer to an accepted `CONNECT`.
    static func connectionEstablished(version: HTTPVersion) -> [HTTPServerResponsePart] {
        [.head(HTTPResponseHead(version: version, status: .custom(code: 200, reasonPhrase: "Connection Established"))), .end(nil)]
    }
}
