import GatewayCore
import Logging
import NIOCore
import NIOHTTP2

/// The connection-level side of an intercepted HTTP/2 connection, after
/// `NIOHTTP2Handler` (whose inline multiplexer gives each stream its
/// ``ClientHTTP2StreamHandler``): counts open streams, closes the connection after
/// `limits.idle_timeout` without any, and drains it on shutdown with a GOAWAY
/// (streams in flight finish; the connection closes when the last one ends,
/// or at the drain timeout). A connection error (a flood of resets, of
/// CONTINUATION or control frames, a flow-control violation: NIOHTTP2 sent
/// its GOAWAY) closes the connection; a stream error (a bad content-length,
/// an uppercase field name) resets that stream only. However it closes, the
/// connection logs one line when it has (``CloseReason``: the first cause
/// seen), at info only for abuse.
final class ClientHTTP2ConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    private let logger: Logger
    private let clientAddress: String
    private let idleTimeout: TimeAmount
    private var context: ChannelHandlerContext?
    private var openStreams = 0
    private var lastStreamID = HTTP2StreamID.rootStream
    private var draining = false
    private var idleTimer: Scheduled<Void>?
    /// Why it closes: the first cause seen (nil until one is: the client closed it).
    private var closeReason: CloseReason?
    private var loggedClose = false

    init(logger: Logger, clientAddress: String, idleTimeout: TimeAmount) {
        self.logger = logger
        self.clientAddress = clientAddress
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        armIdleTimer()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        idleTimer = nil
        logClose()
        context.fireChannelInactive()
    }

    /// Connection-level frames (streams' frames go to their own channels):
    /// a client's GOAWAY for an error is remembered as the reason.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway(_, let errorCode, _) = unwrapInboundIn(data).payload, errorCode != .noError {
            closing(.clientGoAway(errorCode))
        }
        context.fireChannelRead(data)
    }

    /// `reason` is why the connection closes, unless an earlier one was.
    private func closing(_ reason: CloseReason) {
        if closeReason == nil { closeReason = reason }
    }

    /// The connection's one line, once.
    private func logClose() {
        guard !loggedClose else { return }
        loggedClose = true
        let reason = closeReason ?? .clientClosed
        logger.log(level: reason.level, "closed HTTP/2 connection: \(reason.text)", metadata: ["client": "\(clientAddress)"])
    }

    /// A stream opened (told by NIOHTTP2's stream delegate, on this loop).
    func streamOpened(_ id: HTTP2StreamID) {
        openStreams += 1
        if id > lastStreamID { lastStreamID = id }
        idleTimer?.cancel()
        idleTimer = nil
    }

    func streamClosed() {
        openStreams = max(0, openStreams - 1)
        guard openStreams == 0 else { return }
        if draining {
            closeAfterPendingWrites()
        } else {
            armIdleTimer()
        }
    }

    /// NIOHTTP2's stream delegate, forwarding to the handler on its loop.
    struct StreamEvents: NIOHTTP2StreamDelegate {
        let handler: NIOLoopBound<ClientHTTP2ConnectionHandler>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            handler.value.streamOpened(id)
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            handler.value.streamClosed()
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if HTTP2StreamErrors.isStreamError(error) {
            // One stream's fault (NIOHTTP2 reset it): the other streams go on.
            logger.debug("HTTP/2 stream reset", metadata: ["client": "\(clientAddress)", "error": "\(error)"])
            return
        }
        // Logged once, when the connection has closed (``logClose()``).
        closing(CloseReason(connectionError: error))
        context.close(promise: nil)
    }

    /// Draining began: GOAWAY now (no new streams); the connection closes once its streams end.
    func drain() {
        guard let context, !draining else { return }
        draining = true
        closing(.drained)
        let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil))
        context.writeAndFlush(wrapOutboundOut(goAway), promise: nil)
        if openStreams == 0 { closeAfterPendingWrites() }
    }

    /// Closes once what the streams wrote went out: a stream is told closed
    /// while its last frames may still wait in NIOHTTP2's buffer for the
    /// parent's flush, and a close would drop them.
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
            guard handler.openStreams == 0 else { return }
            handler.closing(.idle)
            handler.drain()
        }
    }
}
