import NIOCore
import NIOHTTP2

/// The last handler of an HTTP/2 connection, after `NIOHTTP2Handler`, which
/// hands it the frames of stream 0. The server's first SETTINGS completes the
/// connection's start with its limit of concurrent streams; a later change of
/// that limit goes to the pool. GOAWAY drains the connection (no new stream;
/// the streams above its last stream id fail as refused, which NIOHTTP2 reports
/// to them). An error on the connection drains it too: `NIOHTTP2Handler` has
/// answered a connection error with its own GOAWAY, and a socket or TLS error
/// closes it anyway. Every error drains it: NIOHTTP2 fires a stream's errors
/// here too and cannot be told apart from a connection's by kind (frames on a
/// stream reset longer ago than it remembers are `StreamClosed` and end the
/// connection); draining one that was still good costs a new connection, using
/// one that sent GOAWAY left every later request without an answer.
final class HTTP2ConnectionHandler: ChannelInboundHandler {
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
        // NIOHTTP2 fires stream and connection errors alike (after its
        // RST_STREAM or its GOAWAY); a stream's own errors reach its channel
        // too. Whatever reaches here may have ended the connection (frames on a
        // stream reset long ago are a connection error, GOAWAY sent): it takes
        // no new stream and closes once its streams ended. At worst a later
        // request opens a connection again.
        drain(failingStartWith: error)
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
