import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// A new connection's channel, connected and (for https) through its TLS
/// handshake, before any protocol handler is added.
struct OpenedChannel: Sendable {
    let channel: any Channel
    let timings: ConnectionTimings
    /// What the server selected in ALPN; nil over plain http or when it selected nothing.
    let negotiatedProtocol: String?
}

/// Opens upstream connections: DNS + TCP connect (TCP_NODELAY), for https the
/// TLS handler from the factory (offering the ALPN protocols asked for) and a
/// wait for the handshake, then the protocol's handlers: an
/// `UpstreamAttemptHandler` for HTTP/1.1, which writes requests and frames
/// responses itself, or HTTP/2's (`+HTTP2.swift`). The whole of it is bounded by
/// the connect timeout. EventLoopFutures stay in here; the pool sees one future.
struct UpstreamConnector: Sendable {
    let configuration: UpstreamPoolConfiguration
    let eventLoopGroup: any EventLoopGroup
    let tls: any UpstreamTLSHandlerFactory
    /// `deny` IP/CIDR rules, checked against the address connected to.
    let deniedAddresses: DeniedAddresses
    /// The gateway's own listeners, never connected to as an upstream.
    var ownListeners = OwnListeners()

    /// Opens an HTTP/1.1 connection (ALPN offers `http/1.1` alone); the future
    /// fails with a `GatewayError` (dnsFailure, connectFailed, connectTimeout,
    /// tlsHandshakeFailed, pinMismatch, certificateInvalid).
    func connect(
        id: Int,
        key: UpstreamKey,
        upstreamName: String?,
        on chosenLoop: (any EventLoop)? = nil,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) -> EventLoopFuture<UpstreamConnection> {
        let requestTimeout = TimeAmount(configuration.requestTimeout)
        return open(key: key, upstreamName: upstreamName, on: chosenLoop, alpn: .http1) { opened in
            opened.channel.eventLoop.makeCompletedFuture {
                try Self.http1Connection(id: id, key: key, opened: opened, requestTimeout: requestTimeout, onRelease: onRelease)
            }
        }
    }

    /// The HTTP/1.1 connection on an opened channel: its `UpstreamAttemptHandler`
    /// added last. Runs on the channel's loop.
    static func http1Connection(
        id: Int,
        key: UpstreamKey,
        opened: OpenedChannel,
        requestTimeout: TimeAmount,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) throws -> UpstreamConnection {
        let channel = opened.channel
        let handler = UpstreamAttemptHandler(
            upstream: key.upstream,
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
            timings: opened.timings
        )
    }

    /// Connects, checks the address, does TLS (offering `alpn`) and hands the
    /// channel to `finish`, synchronously on its loop right after the handshake
    /// (so that bytes a server sends first, an HTTP/2 preface, reach the
    /// handlers `finish` adds). The connect timeout bounds all of it, `finish`'s
    /// future included; on any failure the channel is closed.
    func open<Made: Sendable>(
        key: UpstreamKey,
        upstreamName: String?,
        on chosenLoop: (any EventLoop)?,
        alpn: UpstreamALPNOffer,
        finish: @escaping @Sendable (OpenedChannel) throws -> EventLoopFuture<Made>
    ) -> EventLoopFuture<Made> {
        // Prefer the caller's event loop: a client connection's task runs on its
        // channel's loop, so its upstream channel on the same loop avoids thread hops.
        let eventLoop = chosenLoop ?? MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoopGroup.next()
        let upstream = key.upstream
        let promise = eventLoop.makePromise(of: Made.self)
        let channelBox = NIOLockedValueBox<(any Channel)?>(nil)
        let connectTimeout = TimeAmount(configuration.connectTimeout)
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
            .channelOption(ChannelOptions.tcpOption(.tcp_nodelay), value: 1)
            // One read per wake-up, of at most `maxBytesPerRead`: the exchange
            // pauses the next read while its client cannot take more, so a slow
            // client holds at most its write buffer and one read.
            .channelOption(ChannelOptions.maxMessagesPerRead, value: 1)
            .channelOption(ChannelOptions.recvAllocator, value: Self.receiveBuffers(upTo: configuration.maxBytesPerRead))
            .connect(host: key.host, port: key.port)
            .flatMapError { error in
                eventLoop.makeFailedFuture(GatewayError.connectFailure(error, upstream: upstream))
            }
            .flatMap { channel -> EventLoopFuture<Made> in
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
                return Self.configure(channel: channel, key: key, upstreamName: upstreamName, tls: tls, alpn: alpn, timings: timings)
                    .flatMap { opened in
                        do {
                            return try finish(opened)
                        } catch {
                            return channel.eventLoop.makeFailedFuture(error)
                        }
                    }
            }
            .whenComplete { result in
                timeout.cancel()
                switch result {
                case .success(let made):
                    promise.succeed(made)
                    // Lost the race against the timeout: nobody will use it.
                    promise.futureResult.whenFailure { _ in channelBox.withLockedValue { $0 }?.close(promise: nil) }
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
        alpn: UpstreamALPNOffer,
        timings: ConnectionTimings
    ) -> EventLoopFuture<OpenedChannel> {
        let upstream = key.upstream
        do {
            guard key.scheme == .https else {
                return channel.eventLoop.makeSucceededFuture(OpenedChannel(channel: channel, timings: timings, negotiatedProtocol: nil))
            }
            var started = timings
            started.tlsStart = .now
            let tlsTimings = started
            let made: (handler: NIOSSLClientHandler, report: TLSVerificationReport)
            do {
                made = try tls.makeClientHandler(serverHostname: key.host, settings: key.tls, upstreamName: upstreamName, alpn: alpn)
            } catch {
                throw GatewayError.tlsFailure(error, report: TLSVerificationReport(), upstream: upstream)
            }
            let report = made.report
            let handshake = channel.eventLoop.makePromise(of: Void.self)
            let observer = TLSHandshakeObserver(promise: handshake)
            try channel.pipeline.syncOperations.addHandler(made.handler)
            // One TLS record per flush, not one per write (an HTTP/2 frame, a head, a chunk).
            try channel.pipeline.syncOperations.addHandler(TLSRecordCoalescer())
            try channel.pipeline.syncOperations.addHandler(observer)
            let observerBound = NIOLoopBound(observer, eventLoop: channel.eventLoop)
            return handshake.futureResult
                .flatMapErrorThrowing { error in
                    throw GatewayError.tlsFailure(error, report: report, upstream: upstream)
                }
                .flatMapThrowing {
                    var timings = tlsTimings
                    timings.tlsEnd = .now
                    let negotiated = observerBound.value.negotiatedProtocol
                    channel.pipeline.syncOperations.removeHandler(observerBound.value, promise: nil)
                    return OpenedChannel(channel: channel, timings: timings, negotiatedProtocol: negotiated)
                }
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }

    /// Upstream reads grow up to `maximum` (128 KiB by default; NIO's own stops
    /// at 64 KiB), so a response body of up to that size that has arrived is
    /// read in one call. NIO's allocator keeps the largest buffer a connection
    /// read into: a pooled connection that carried a large response holds that much.
    static func receiveBuffers(upTo maximum: Int) -> AdaptiveRecvByteBufferAllocator {
        AdaptiveRecvByteBufferAllocator(minimum: 64, initial: min(2048, maximum), maximum: maximum)
    }

    /// The address `channel` is connected to, when the `deny` rules cover it.
    static func deniedAddress(of channel: any Channel, in denied: DeniedAddresses) -> IPAddress? {
        guard let text = channel.remoteAddress?.ipAddress, let address = IPAddress(text) else { return nil }
        return denied.denies(address) ? address : nil
    }
}
