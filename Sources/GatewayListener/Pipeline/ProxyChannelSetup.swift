import GatewayCore
import NIOCore
import NIOHTTP1

/// Builds the per-connection pipeline of the proxy listener:
///
///     HeadTimeoutHandler → HTTPResponseEncoder → HTTP decoder (limits, leftover
///     bytes forwarded for CONNECT) → RequestHeadObserver → NIOAsyncChannel
///
/// The encoder does not set framing headers: the connection decides them per
/// response (it knows about HEAD, 204/304 and HTTP/1.0 clients).
struct ProxyChannelSetup {
    var maxHeadBytes: Int
    var headerTimeout: TimeAmount
    var idleTimeout: TimeAmount

    typealias ClientChannel = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    /// Handlers a CONNECT tunnel removes before gluing raw bytes.
    struct HTTPHandlers: @unchecked Sendable {
        // Only touched on the channel's event loop.
        let timeouts: HeadTimeoutHandler
        let encoder: HTTPResponseEncoder
        let decoder: ByteToMessageHandler<HTTPRequestDecoder>
        let observer: RequestHeadObserver
        /// Made on the event loop (NIOLoopBound requires it), used from the connection task.
        let signal: ExchangeSignal
        let maxHeadBytes: Int
    }

    func configure(_ channel: any Channel) throws -> (ClientChannel, HTTPHandlers) {
        channel.eventLoop.assertInEventLoop()
        var encoderConfiguration = HTTPResponseEncoder.Configuration()
        encoderConfiguration.automaticallySetFramingHeaders = false

        let timeouts = HeadTimeoutHandler(headerTimeout: headerTimeout, idleTimeout: idleTimeout)
        let encoder = HTTPResponseEncoder(configuration: encoderConfiguration)
        let decoder = Self.makeDecoder(maxHeadBytes: maxHeadBytes)
        let observer = RequestHeadObserver(timeouts: timeouts)
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(timeouts)
        try sync.addHandler(encoder)
        try sync.addHandler(decoder)
        try sync.addHandler(observer)
        let asyncChannel = try ClientChannel(
            wrappingChannelSynchronously: channel,
            configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8))
        )
        let signal = ExchangeSignal(timeouts: timeouts, eventLoop: channel.eventLoop)
        return (asyncChannel, HTTPHandlers(timeouts: timeouts, encoder: encoder, decoder: decoder, observer: observer, signal: signal, maxHeadBytes: maxHeadBytes))
    }

    /// The request decoder with the head limits; bytes after a `CONNECT` are kept
    /// for whoever takes the connection over (a tunnel, or interception's TLS).
    static func makeDecoder(maxHeadBytes: Int) -> ByteToMessageHandler<HTTPRequestDecoder> {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = maxHeadBytes
        limits.maxHeaderFieldSize = maxHeadBytes
        limits.maxHeaderFieldCount = 256
        return ByteToMessageHandler(
            HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .drop, limitConfiguration: limits)
        )
    }
}

/// A Sendable handle the connection task uses to tell the timeout handler that
/// an exchange finished (hops to the event loop).
struct ExchangeSignal: Sendable {
    private let timeouts: NIOLoopBound<HeadTimeoutHandler>
    private let eventLoop: any EventLoop

    init(timeouts: HeadTimeoutHandler, eventLoop: any EventLoop) {
        self.timeouts = NIOLoopBound(timeouts, eventLoop: eventLoop)
        self.eventLoop = eventLoop
    }

    func exchangeFinished() {
        if eventLoop.inEventLoop {
            // The usual case: the connection task runs on its channel's loop.
            timeouts.value.exchangeFinished()
        } else {
            let timeouts = self.timeouts
            eventLoop.execute { timeouts.value.exchangeFinished() }
        }
    }
}
