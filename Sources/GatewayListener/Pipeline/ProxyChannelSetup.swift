import GatewayCore
import NIOCore

/// Builds the per-connection pipeline of the proxy listener: one handler,
/// ``ClientConnectionHandler``, which frames the requests from the bytes read
/// (``HTTP1RequestFramer``: head limit, framing checks, the bytes after a
/// `CONNECT` kept for whoever takes the connection over) and runs the
/// connection's timeouts (``ClientTimeouts``). One handler, not three: every
/// read, write and flush passes one handler, and a request's parts are never
/// wrapped for the pipeline.
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
        try channel.pipeline.syncOperations.addHandler(
            ClientConnectionHandler(environment: environment, timeouts: ClientTimeouts(limits: timeouts), maxHeadBytes: maxHeadBytes)
        )
    }
}
