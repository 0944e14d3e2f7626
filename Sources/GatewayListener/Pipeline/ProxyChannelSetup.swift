import GatewayCore
import NIOCore

/// Builds the per-connection pipeline of the proxy listener:
///
///     ClientTimeoutHandler → HTTP1RequestDecoder (head limit, framing checks,
///     leftover bytes forwarded for CONNECT) → ClientConnectionHandler
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

    /// The request decoder with the head limit; bytes after a `CONNECT` are kept
    /// for whoever takes the connection over (a tunnel, or interception's TLS).
    package static func makeDecoder(maxHeadBytes: Int) -> HTTP1RequestDecoder {
        HTTP1RequestDecoder(maxHeadBytes: maxHeadBytes)
    }
}

/// The handlers in front of a ``ClientConnectionHandler``: a tunnel removes
/// them, interception replaces the decoder.
struct ClientPipeline {
    let timeouts: ClientTimeoutHandler
    var decoder: HTTP1RequestDecoder
}
