import GatewayCore
import Logging
import NIOCore
import NIOHTTP2

/// The one handler of an intercepted HTTP/2 connection above `NIOHTTP2Handler`
/// (no stream multiplexer: no child channel, pipeline or promise per stream).
/// It keeps the client's streams in a table by id (``ClientHTTP2Stream``, one
/// exchange each; `+Streams.swift` routes their frames and events), refills
/// the connection's receive window as frames arrive, flushes once per read or
/// loop tick however many streams wrote, closes the connection after
/// `limits.idle_timeout` without a stream, and drains it on shutdown with a
/// GOAWAY (streams in flight finish; the connection closes when the last one
/// ends, or at the drain timeout). A connection error (a flood of resets, of
/// CONTINUATION or control frames, a flow-control violation: NIOHTTP2 sent
/// its GOAWAY) closes the connection; a stream error (a bad content-length,
/// an uppercase field name) resets that stream only. However it closes, the
/// connection logs one line when it has (``CloseReason``: the first cause
/// seen), at info only for abuse.
final class ClientHTTP2ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    let environment: ClientConnectionEnvironment
    let origin: InterceptedOrigin
    let clientAddress: String
    let eventLoop: any EventLoop
    private let idleTimeout: TimeAmount
    var context: ChannelHandlerContext?
    var streams: [HTTP2StreamID: ClientHTTP2Stream] = [:]
    var lastStreamID = HTTP2StreamID.rootStream
    private var draining = false
    private var idleTimer: Scheduled<Void>?
    /// Why it closes: the first cause seen (nil until one is: the client closed it).
    private var closeReason: CloseReason?
    private var loggedClose = false
    var connectionWindow = HTTP2InboundWindow(target: HTTP2ServerSettings.connectionWindow)
    /// The client's SETTINGS_INITIAL_WINDOW_SIZE: a new stream's send window.
    var clientInitialWindow = 65_535
    private(set) var isChannelWritable = true
    /// The streams' writes, their read batch, the flush per read or tick.
    let io = HTTP2StreamIO<ClientHTTP2Stream>()

    init(environment: ClientConnectionEnvironment, origin: InterceptedOrigin, clientAddress: String, idleTimeout: TimeAmount, eventLoop: any EventLoop) {
        self.environment = environment
        self.origin = origin
        self.clientAddress = clientAddress
        self.idleTimeout = idleTimeout
        self.eventLoop = eventLoop
    }

    var logger: Logger { environment.logger }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        io.attach(context)
        isChannelWritable = context.channel.isWritable
        armIdleTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        closeAllStreams()
        io.detach()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        closeAllStreams()
        logClose()
        context.fireChannelInactive()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        isChannelWritable = context.channel.isWritable
        for stream in streams.values { stream.writabilityMaybeChanged() }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let streamError = error as? NIOHTTP2Errors.StreamError {
            // A write NIOHTTP2 refused on one stream: that stream is reset.
            streams[streamError.streamID]?.errorCaught(streamError.baseError)
            return
        }
        if HTTP2StreamErrors.isStreamError(error) {
            // One stream's fault (NIOHTTP2 reset it, and its close event follows): the other streams go on.
            logger.debug("HTTP/2 stream reset", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
            return
        }
        // Logged once, when the connection has closed (``logClose()``).
        closing(CloseReason(connectionError: error))
        context.close(promise: nil)
    }

    /// `reason` is why the connection closes, unless an earlier one was.
    func closing(_ reason: CloseReason) {
        if closeReason == nil { closeReason = reason }
    }

    /// The connection's one line, once.
    private func logClose() {
        guard !loggedClose else { return }
        loggedClose = true
        let reason = closeReason ?? .clientClosed
        logger.log(level: reason.level, "closed HTTP/2 connection: \(reason.text)", metadata: ["client": "\(clientAddress)"])
    }

    /// A stream opened: no idle timer while one is.
    func streamOpened() {
        idleTimer?.cancel()
        idleTimer = nil
    }

    /// A stream closed (and left the table).
    func streamClosed() {
        guard streams.isEmpty else { return }
        if draining {
            closeAfterPendingWrites()
        } else {
            armIdleTimer()
        }
    }

    /// Draining began: GOAWAY now (no new streams); the connection closes once its streams end.
    func drain() {
        guard let context, !draining else { return }
        draining = true
        closing(.drained)
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(goAway), promise: nil)
        if streams.isEmpty { closeAfterPendingWrites() }
    }

    /// Closes once what the streams wrote went out: a stream is told closed
    /// while its last frames may still wait for the flush, and a close would drop them.
    private func closeAfterPendingWrites() {
        guard let context else { return }
        context.flush()
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.close(promise: nil) }
    }

    /// The drain timeout passed: whatever is still open closes.
    func abort() {
        if closeReason == nil || closeReason == .drained { closeReason = .drainTimeout }
        context?.close(promise: nil)
    }

    private func armIdleTimer() {
        guard let context, idleTimer == nil else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(in: idleTimeout) {
            let handler = bound.value
            handler.idleTimer = nil
            guard handler.streams.isEmpty else { return }
            handler.closing(.idle)
            handler.drain()
        }
    }
}
