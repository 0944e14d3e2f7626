import GatewayCore
package import NIOCore
package import NIOHTTP1

/// Builds the per-connection pipeline of the proxy listener:
///
///     ClientTimeoutHandler → HTTP request decoder (limits, leftover bytes
///     forwarded for CONNECT) → ClientConnectionHandler
///
/// There is no response encoder: the handler writes responses as bytes
/// (``ResponseFraming``), framed per response (it knows about HEAD, 204/304
/// and HTTP/1.0 clients).
package struct ProxyChannelSetup: Sendable {
    var maxHeadBytes: Int
    var timeouts: ClientTimeoutStateMachine.Limits
    var environment: ClientConnectionEnvironment

    func configure(_ channel: any Channel) throws {
        channel.eventLoop.assertInEventLoop()
        let timeouts = ClientTimeoutHandler(limits: self.timeouts)
        let decoder = Self.makeDecoder(maxHeadBytes: maxHeadBytes)
        let handlers = ClientPipeline(timeouts: timeouts, decoder: decoder)
        let sync = channel.pipeline.syncOperations
        try sync.addHandler(timeouts)
        try sync.addHandler(decoder)
        try sync.addHandler(ClientConnectionHandler(environment: environment, pipeline: handlers))
    }

    /// The request decoder with the head limits; bytes after a `CONNECT` are kept
    /// for whoever takes the connection over (a tunnel, or interception's TLS).
    package static func makeDecoder(maxHeadBytes: Int) -> ByteToMessageHandler<HTTPRequestDecoder> {
        var limits = NIOHTTPDecoderLimitConfiguration()
        limits.maxHeaderListSize = maxHeadBytes
        limits.maxHeaderFieldSize = maxHeadBytes
        limits.maxHeaderFieldCount = 256
        return ByteToMessageHandler(
            HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .drop, limitConfiguration: limits)
        )
    }
}

/// The handlers in front of a ``ClientConnectionHandler``: a tunnel removes
/// them, interception replaces the decoder.
struct ClientPipeline {
    let timeouts: ClientTimeoutHandler
    var decoder: ByteToMessageHandler<HTTPRequestDecoder>
}
