import GatewayCore
import NIOCore
import NIOHTTP2

/// The one handler of an upstream HTTP/2 connection above `NIOHTTP2Handler`
/// (no stream multiplexer: no child channel, pipeline or promise per stream).
/// It opens the attempts' streams and keeps them in a table by stream id
/// (``UpstreamHTTP2Stream``, `+Streams.swift`), hands each its frames, its
/// window reports and its close, refills the connection's receive window as
/// frames arrive, and flushes once per loop tick however many streams wrote.
///
/// The server's first SETTINGS completes the connection's start with its limit
/// of concurrent streams; a later change of that limit goes to the pool. GOAWAY
/// drains the connection (no new stream; NIOHTTP2 closes the streams above its
/// last stream id as refused).
///
/// An error closes the connection, failing its streams in flight at once
/// (502, or a retry where that is safe). For a connection error
/// `NIOHTTP2Handler` has sent GOAWAY, after which RFC 9113 §5.4.1 says the
/// endpoint MUST close the TCP connection, and it does not: a stream waiting
/// for a head the connection will never decode (an oversized header block
/// breaks the HPACK state) waited for `request_timeout`. NIOHTTP2 reports an
/// inbound stream error here too, without its stream (which it resets, and
/// whose close says so): a stream error from an upstream is a broken server.
/// A write it refused on one stream (`StreamError`, with the stream's id)
/// fails that stream only.
final class UpstreamHTTP2ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private var firstSettings: EventLoopPromise<Int>?
    let events: HTTP2ConnectionEvents
    let eventLoop: any EventLoop
    /// `host:port`, as errors name it.
    let upstream: String
    let requestTimeout: TimeAmount
    private var maxStreams = 0
    private(set) var goingAway = false
    var context: ChannelHandlerContext?
    /// The open streams, by id.
    var streams: [HTTP2StreamID: UpstreamHTTP2Stream] = [:]
    /// The id the next stream takes: odd, rising (RFC 9113 §5.1.1).
    var nextStreamID = 1
    var connectionWindow = HTTP2InboundWindow(target: HTTP2Connection.connectionWindow)
    /// The streams' writes, their read batch, the flush per read or tick.
    let io = HTTP2StreamIO<UpstreamHTTP2Stream>()
    /// The one timer of the streams' request timeouts (`+Deadlines.swift`), due at `timerDeadline`.
    var timer: NIOScheduledCallback?
    var timerDeadline = NIODeadline.distantFuture
    /// The last stream's `:authority` and what it was made from (``authority(of:)``).
    var lastAuthority: (host: String, port: Int, scheme: UpstreamScheme, value: String)?

    init(firstSettings: EventLoopPromise<Int>, events: HTTP2ConnectionEvents, upstream: String, requestTimeout: TimeAmount, eventLoop: any EventLoop) {
        self.firstSettings = firstSettings
        self.events = events
        self.upstream = upstream
        self.requestTimeout = requestTimeout
        self.eventLoop = eventLoop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        io.attach(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failStart(ChannelError.eof)
        closeAllStreams()
        stopTimer()
        io.detach()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        io.readStarted()
        let frame = unwrapInboundIn(data)
        guard frame.streamID == .rootStream else {
            streams[frame.streamID]?.receive(frame.payload)
            return
        }
        switch frame.payload {
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

    func channelReadComplete(context: ChannelHandlerContext) {
        io.readEnded()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch HTTP2UserEvent(event) {
        case .windowUpdated(let window): windowUpdated(window)
        case .streamClosed(let closed): streamClosed(closed)
        case .streamCreated: break
        case .other: context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            streams[streamError.streamID]?.errorCaught(streamError.baseError)
            return
        }
        // No new stream, then closed once NIOHTTP2's GOAWAY (or RST_STREAM),
        // written in this read, is flushed at its end.
        drain(failingStartWith: error)
        let loopBound = context.loopBound
        context.eventLoop.execute { loopBound.value.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failStart(ChannelError.eof)
        closeAllStreams()
        stopTimer()
        context.fireChannelInactive()
    }

    /// No new stream on this connection; before its start, the start fails.
    func drain(failingStartWith error: any Error) {
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
