import GatewayCore
import NIOCore

/// Connections of the pool's HTTP/2 side: the key's ALPN offer (`h2` then
/// `http/1.1` for `auto`, `h2` alone for `http2`), then HTTP/2 handlers when
/// the server selected `h2` (or, asked for `http2`, when it selected nothing:
/// prior knowledge, h2c over plain http), HTTP/1.1's otherwise.
extension UpstreamConnector {
    func connectNegotiating(
        id: Int,
        key: UpstreamKey,
        upstreamName: String?,
        http2Events: HTTP2ConnectionEvents,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) -> EventLoopFuture<NegotiatedConnection> {
        let requestTimeout = TimeAmount(configuration.requestTimeout)
        return open(key: key, upstreamName: upstreamName, on: nil, alpn: key.alpnOffer) { opened in
            if Self.speaksHTTP2(key: key, negotiated: opened.negotiatedProtocol) {
                return HTTP2Connection.start(id: id, key: key, opened: opened, requestTimeout: requestTimeout, events: http2Events)
            }
            return opened.channel.eventLoop.makeCompletedFuture {
                NegotiatedConnection.http1(
                    try Self.http1Connection(id: id, key: key, opened: opened, requestTimeout: requestTimeout, onRelease: onRelease)
                )
            }
        }
    }

    /// Whether a connection speaks HTTP/2: the server selected `h2`, or it
    /// selected nothing (a server without ALPN, plain http) and the key asks for `http2`.
    static func speaksHTTP2(key: UpstreamKey, negotiated: String?) -> Bool {
        switch negotiated {
        case "h2"?: true
        case nil: key.httpVersion == .http2
        default: false
        }
    }
}
