import GatewayCore
import NIOCore
import NIOHTTP1

/// A WebSocket through the gateway (RFC 6455 §4, RFC 9110 §7.8): the
/// handshake is an exchange like any other (admission, route, attempt steps,
/// observers), sent upstream with `Connection: Upgrade` and `Upgrade:
/// websocket`. Its 101 goes to the client and both connections become a
/// tunnel; any other answer is a normal response, after which the connection
/// closes (the client asked for an upgrade: nothing after it is parsed).
extension ClientConnectionHandler {
    /// The upstream answered the handshake of the exchange in flight with 101:
    /// the 101 goes out (the upstream's end-to-end fields, `Via`, the upgrade
    /// fields of this hop), then the bytes the upstream sent after it, and the
    /// two connections become a tunnel. Observers saw the head and the end of
    /// the exchange (status 101, ``Exchange``), then see the tunnel opening and
    /// closing; a log line at close gives its duration and bytes each way.
    func switchToTunnel(after head: UpstreamResponseHead, tunnel: UpstreamTunnel, info: ExchangeInfo, url: String) {
        exchange = nil
        current = nil
        let framing = ResponseFraming(
            status: head.status, fields: head.fields, declaredLength: nil,
            requestMethod: info.method, requestVersion: info.version, keepAlive: false,
            via: RequestRouter.responseVia, upgrade: "websocket",
            allocator: writer.allocator
        )
        var first = [framing.head]
        if let leftover = tunnel.leftover { first.append(leftover) }
        let leftoverBytes = tunnel.leftover?.readableBytes ?? 0

        let observations = info.observations
        for observation in observations { observation.tunnelOpened() }
        let logger = info.logger
        let opened = ContinuousClock.now
        let target = LoggedText.loggedTarget(url)
        switchToTunnel(peer: tunnel.channel, first: first) { totals in
            let duration = ContinuousClock.now - opened
            let fromUpstream = totals.bytesFromPeer + leftoverBytes
            let summary = TunnelSummary(bytesFromClient: totals.bytesFromClient, bytesFromUpstream: fromUpstream, duration: duration)
            for observation in observations { observation.tunnelClosed(summary) }
            logger.info(
                "WebSocket \(target) closed",
                metadata: [
                    "ms": "\((duration.seconds * 100_000).rounded() / 100)",
                    "bytes_in": "\(totals.bytesFromClient)",
                    "bytes_out": "\(fromUpstream)",
                ]
            )
        }
    }
}

extension ClientRequestHead {
    /// A WebSocket opening handshake (RFC 6455 §4.1): a GET in HTTP/1.1 whose
    /// `Upgrade` lists `websocket` and whose `Connection` lists `upgrade`. Other
    /// upgrades (h2c and the rest) are not carried: their fields are dropped
    /// as hop-by-hop, and the upstream answers the request as it is.
    var isWebSocketHandshake: Bool {
        guard method == .GET, version == .http1_1 else { return false }
        // By bytes: values are read only for those two fields.
        return headers.field("upgrade", lists: "websocket") && headers.field("connection", lists: "upgrade")
    }
}
