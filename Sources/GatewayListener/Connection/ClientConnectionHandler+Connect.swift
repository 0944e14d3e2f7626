import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// `CONNECT host:port`: checks the port and host, then either intercepts (an
/// upstream with `intercept: true`: TLS terminated here with a minted leaf,
/// requests read inside on this same handler) or connects, answers 200 and
/// splices the two sockets (the HTTP handlers leave the pipeline).
extension ClientConnectionHandler {
    func connect(head: ClientRequestHead, host: String, port: Int, active: ActiveConfig, info: ExchangeInfo) {
        let config = active.config
        let upstream = "\(host):\(port)"
        // The port and host passed the admission steps (AccessStep).
        machine.handOver()
        guard let context else { return }
        if let interceptor = active.interceptor,
            let upstreamConfig = active.upstreamHosts.upstreamIndex(forHost: host).map({ config.upstreams[$0] }), upstreamConfig.intercept
        {
            // After the framer has delivered the CONNECT's end (it stops then).
            // The handler and the exchange's info (its observers) stay on this loop.
            let bound = NIOLoopBound((handler: self, info: info), eventLoop: context.eventLoop)
            return context.eventLoop.execute {
                bound.value.handler.intercept(
                    head: head, host: host, port: port, upstream: upstreamConfig.name, interceptor: interceptor, info: bound.value.info
                )
            }
        }
        let ownListeners = environment.ownListeners
        if let error = GatewayError.ownListener(named: host, port: port, in: ownListeners, upstream: upstream) {
            return connectFailed(error, info: info)
        }
        let timeout = TimeAmount.nanoseconds(Int64(config.pool.connectTimeout.seconds * 1e9))
        let access = active.access
        let bound = NIOLoopBound((handler: self, info: info), eventLoop: context.eventLoop)
        ClientBootstrap(group: context.eventLoop)
            .connectTimeout(timeout)
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .channelOption(ChannelOptions.autoRead, value: false)
            .connect(host: host, port: port)
            .whenComplete { result in
                switch result {
                case .success(let peer):
                    // The address reached, not only the name asked for, must pass the deny rules.
                    if let address = peer.remoteAddress?.ipAddress, !access.isAllowed(address: address) {
                        peer.close(promise: nil)
                        let error = GatewayError(.hostNotAllowed, "\(host) resolved to \(address), which the gateway's access rules deny", upstream: upstream)
                        return bound.value.handler.connectFailed(error, info: bound.value.info)
                    }
                    if let error = GatewayError.ownListener(peer.remoteAddress, in: ownListeners, host: host, upstream: upstream) {
                        peer.close(promise: nil)
                        return bound.value.handler.connectFailed(error, info: bound.value.info)
                    }
                    bound.value.handler.splice(head: head, peer: peer, upstream: upstream, info: bound.value.info)
                case .failure(let error):
                    bound.value.handler.connectFailed(ConnectErrorMapping.gatewayError(for: error, host: host, port: port), info: bound.value.info)
                }
            }
    }

    private func connectFailed(_ error: GatewayError, info: ExchangeInfo) {
        writeFinal(error.response(), method: info.method, version: info.version)
        ExchangeLogLine.log(
            info.context, method: info.method, target: .uri(info.uri), status: Int(error.status.code), started: info.started,
            bytesIn: 0, bytesOut: 0, upstream: error.upstream, error: error.code
        )
    }

    /// `200 Connection Established`, the answer to an accepted `CONNECT`.
    private func writeConnectionEstablished(version: HTTPVersion) {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(ResponseFraming.bareHead(version: version, code: 200, reason: "Connection Established")), promise: nil)
    }

    /// Answers 200 and becomes a tunnel to `peer`; logs when both sides closed.
    private func splice(head: ClientRequestHead, peer: any Channel, upstream: String, info: ExchangeInfo) {
        let logger = info.logger
        let started = info.started
        let established = ResponseFraming.bareHead(version: head.version, code: 200, reason: "Connection Established")
        switchToTunnel(peer: peer, first: [established]) { totals in
            logger.info(
                "CONNECT \(upstream) 200",
                metadata: [
                    "ms": "\(((ContinuousClock.now - started).seconds * 100_000).rounded() / 100)",
                    "bytes_in": "\(totals.bytesFromClient)",
                    "bytes_out": "\(totals.bytesFromPeer)",
                ]
            )
        }
    }

    /// TLS is in place: the connection reads requests again, each for `origin`,
    /// through a fresh framer (the CONNECT's exchange is over).
    private func readIntercepted(from origin: InterceptedOrigin) {
        framer = HTTP1RequestFramer(maxHeadBytes: environment.maxHeadBytes)
        framingStopped = false
        self.origin = origin
        machine = ClientConnectionStateMachine()
        current = nil
        timeouts.exchangeFinished()
        resumeReading()
        context?.read()
    }

    /// Answers 200, puts TLS (a leaf for `host` from the local CA) in front of
    /// this handler, which frames afresh, and reads the requests inside.
    private func intercept(head: ClientRequestHead, host: String, port: Int, upstream: String, interceptor: TLSInterceptor, info: ExchangeInfo) {
        guard let context, context.channel.isActive else { return }
        let sslContext: NIOSSLContext
        do {
            sslContext = try interceptor.serverContext(forHost: host, upstream: upstream)
        } catch {
            info.logger.error("could not mint an interception certificate for \(host): \(error)")
            let failure = GatewayError(.interceptionFailed, "the gateway could not make a certificate for \(host)", upstream: "\(host):\(port)", cause: error)
            return connectFailed(failure, info: info)
        }
        writeConnectionEstablished(version: head.version)
        let logger = info.logger
        // The bytes after the CONNECT (a pipelined ClientHello) go to TLS once it is in place.
        let leftover = stopFraming()
        readIntercepted(from: InterceptedOrigin(host: host, port: port))
        do {
            try InterceptionPipeline.install(
                on: context.channel,
                leftover: leftover,
                context: sslContext,
                onHandshakeFailure: { error in interceptor.handshakeFailed(host: host, upstream: upstream, error: error) }
            )
        } catch {
            logger.debug("could not start intercepting", metadata: ["host": "\(host)", "error": "\(error)"])
            context.close(promise: nil)
            return
        }
        logger.debug("CONNECT \(host):\(port) intercepted", metadata: ["upstream": "\(upstream)"])
    }
}
