import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Opens upstream connections: DNS + TCP connect (TCP_NODELAY), for https the
/// TLS handler from the factory and a wait for the handshake, then an
/// `UpstreamExchangeHandler`, which writes requests and frames responses itself. The whole of it is bounded by
/// the connect timeout. EventLoopFutures stay in here; the pool sees one future.
struct UpstreamConnector: Sendable {
    let configuration: UpstreamPoolConfiguration
    let eventLoopGroup: any EventLoopGroup
    let tls: any UpstreamTLSHandlerFactory
    /// `deny` IP/CIDR rules, checked against the address connected to.
    let deniedAddresses: DeniedAddresses
    /// The gateway's own listeners, never connected to as an upstream.
    var ownListeners = OwnListeners()

    /// Opens a connection; the future fails with a `GatewayError` (dnsFailure,
    /// connectFailed, connectTimeout, tlsHandshakeFailed, pinMismatch, certificateInvalid).
    func connect(
        id: Int,
        key: UpstreamKey,
        upstreamName: String?,
        on chosenLoop: (any EventLoop)? = nil,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) -> EventLoopFuture<UpstreamConnection> {
        // Prefer the caller's event loop: a client connection's task runs on its
        // channel's loop, so its upstream channel on the same loop avoids thread hops.
        let eventLoop = chosenLoop ?? MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoopGroup.next()
        let upstream = key.upstream
        let promise = eventLoop.makePromise(of: UpstreamConnection.self)
        let channelBox = NIOLockedValueBox<(any Channel)?>(nil)
        let connectTimeout = TimeAmount(configuration.connectTimeout)
        let requestTimeout = TimeAmount(configuration.requestTimeout)
        let connectStart = ContinuousClock.now

        let timeout = eventLoop.scheduleTask(in: connectTimeout) {
            promise.fail(GatewayError(.connectTimeout, "connecting to the upstream timed out", upstream: upstream))
            channelBox.withLockedValue { $0 }?.close(promise: nil)
        }

        let tls = self.tls
        let deniedAddresses = self.deniedAddresses
        let ownListeners = self.ownListeners
        if let error = GatewayError.ownListener(named: key.host, port: key.port, in: ownListeners, upstream: upstream) {
            timeout.cancel()
            promise.fail(error)
            return promise.futureResult
        }
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers)
            .connect(host: key.host, port: key.port)
            .flatMapError { error in
                eventLoop.makeFailedFuture(GatewayError.connectFailure(error, upstream: upstream))
            }
            .flatMap { channel -> EventLoopFuture<UpstreamConnection> in
                channelBox.withLockedValue { $0 = channel }
                if let denied = Self.deniedAddress(of: channel, in: deniedAddresses) {
                    return eventLoop.makeFailedFuture(GatewayError(
                        .hostNotAllowed, "\(key.host) resolved to \(denied), which the gateway's access rules deny", upstream: upstream
                    ))
                }
                if let error = GatewayError.ownListener(channel.remoteAddress, in: ownListeners, host: key.host, upstream: upstream) {
                    return eventLoop.makeFailedFuture(error)
                }
                let connectEnd = ContinuousClock.now
                let timings = ConnectionTimings(connectStart: connectStart, connectEnd: connectEnd)
                return Self.configure(channel: channel, key: key, upstreamName: upstreamName, tls: tls, timings: timings)
                    .flatMapThrowing { timings in
                        let handler = UpstreamExchangeHandler(
                            upstream: upstream,
                            requestTimeout: requestTimeout,
                            eventLoop: channel.eventLoop,
                            onRelease: onRelease
                        )
                        try channel.pipeline.syncOperations.addHandler(handler)
                        return UpstreamConnection(
                            id: id,
                            key: key,
                            channel: channel,
                            handler: NIOLoopBound(handler, eventLoop: channel.eventLoop),
                            timings: timings
                        )
                    }
            }
            .whenComplete { result in
                timeout.cancel()
                switch result {
                case .success(let connection):
                    promise.succeed(connection)
                    // Lost the race against the timeout: nobody will use it.
                    promise.futureResult.whenFailure { _ in connection.close() }
                case .failure(let error):
                    channelBox.withLockedValue { $0 }?.close(promise: nil)
                    promise.fail(error)
                }
            }
        return promise.futureResult
    }

    /// Adds TLS for https, and waits for the handshake. Runs on the channel's loop.
    private static func configure(
        channel: any Channel,
        key: UpstreamKey,
        upstreamName: String?,
        tls: any UpstreamTLSHandlerFactory,
        timings: ConnectionTimings
    ) -> EventLoopFuture<ConnectionTimings> {
        let upstream = key.upstream
        do {
            guard key.scheme == .https else {
                return channel.eventLoop.makeSucceededFuture(timings)
            }
            var started = timings
            started.tlsStart = .now
            let tlsTimings = started
            let made: (handler: NIOSSLClientHandler, report: TLSVerificationReport)
            do {
                made = try tls.makeClientHandler(serverHostname: key.host, settings: key.tls, upstreamName: upstreamName)
            } catch {
                throw GatewayError.tlsFailure(error, report: TLSVerificationReport(), upstream: upstream)
            }
            let report = made.report
            let handshake = channel.eventLoop.makePromise(of: Void.self)
            let observer = TLSHandshakeObserver(promise: handshake)
            try channel.pipeline.syncOperations.addHandler(made.handler)
            try channel.pipeline.syncOperations.addHandler(observer)
            let observerBound = NIOLoopBound(observer, eventLoop: channel.eventLoop)
            return handshake.futureResult
                .flatMapErrorThrowing { error in
                    throw GatewayError.tlsFailure(error, report: report, upstream: upstream)
                }
                .flatMapThrowing {
                    var timings = tlsTimings
                    timings.tlsEnd = .now
                    channel.pipeline.syncOperations.removeHandler(observerBound.value, promise: nil)
                    return timings
                }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// Upstream reads grow up to 128 KiB (NIO's default stops at 64 KiB), so a
    /// response body of up to ~128 KiB that has arrived is read in one call.
    /// NIO's pooled allocator keeps the largest buffer a connection read into:
    /// a pooled connection that carried a large response holds up to 128 KiB.
    static let receiveBuffers = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 128 * 1024)

    /// The address `channel` is connected to, when the `deny` rules cover it.
    static func deniedAddress(of channel: any Channel, in denied: DeniedAddresses) -> IPAddress? {
        guard let text = channel.remoteAddress?.ipAddress, let address = IPAddress(text) else { return nil }
        return denied.denies(address) ? address : nil
    }
}
