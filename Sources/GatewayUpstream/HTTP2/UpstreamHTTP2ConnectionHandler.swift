import NIOCore
import NIOHTTP2

/// The last handler of an HTTP/2 connection, after `NIOHTTP2Handler`, which
/// hands it the frames of stream 0. The server's first SETTINGS completes the
/// connection's start with its limit of concurrent streams; a later change of
/// that limit goes to the pool. GOAWAY drains the connection (no new stream;
/// the streams above its last stream id fail as refused, which NIOHTTP2 reports
/// to them).
///
/// An error closes the connection, failing its streams in flight at once
/// (502, or a retry where that is safe). For a connection error
/// `NIOHTTP2Handler` has sent GOAWAY, after which RFC 9113 §5.4.1 says the
/// endpoint MUST close the TCP connection, and it does not: a stream waiting
/// for a head the connection will never decode (an oversized header block
/// breaks the HPACK state) waited for `request_timeout`. NIOHTTP2 fires a
/// stream's errors here too, and cannot be told apart from a connection's by
/// kind: a stream error from an upstream is a broken server, and closing costs
/// its other streams a new connection.
final class UpstreamHTTP2ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame

    private var firstSettings: EventLoopPromise<Int>?
    private let events: HTTP2ConnectionEvents
    private var maxStreams = 0
    private var goingAway = false

    init(firstSettings: EventLoopPromise<Int>, events: HTTP2ConnectionEvents) {
        self.firstSettings = firstSettings
        self.events = events
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data).payload {
        case .settings(.settings(let settings)):
            // A frame may name a parameter twice: the last one counts.
            let announced = settings.last(where: { $0.parameter == .maxConcurrentStreams })?.value
            if let promise = firstSettings {
                firstSettings = nil
                maxStreams = HTTP2Connection.streamLimit(announced: announced)
                promise.succeed(maxStreams)
            } else if let announced, HTTP2Connection.streamLimit(announced: announced) != maxStreams {
                maxStreams = HTTP2Connection.streamLimit(announced: announced)
                events.maxStreamsChanged(maxStreams)
            }
        case .goAway:
            drain(failingStartWith: ChannelError.eof)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // No new stream, then closed once NIOHTTP2's GOAWAY (or RST_STREAM),
        // written in this read, is flushed at its end.
        drain(failingStartWith: error)
        let loopBound = context.loopBound
        context.eventLoop.execute { loopBound.value.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failStart(ChannelError.eof)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failStart(ChannelError.eof)
    }

    /// No new stream on this connection; before its start, the start fails.
    private func drain(failingStartWith error: any Error) {
        if firstSettings != nil {
            failStart(error)
        } else if !goingAway {
            goingAway = true
            events.goingAway()
        }
    }

    private func failStart(_ error: any Error) {
        let promise = firstSettings
        firstSettings = nil
        promise?.fail(error)
    }
}
