import GatewayCore
import NIOCore
import NIOHTTP1

/// Guards the wait for a request head (slowloris) and idle keep-alive connections.
///
/// Sits before the HTTP decoder and sees raw bytes. While the connection waits
/// for a request head: the first byte starts the header timer; if the head is not
/// complete when it fires, a `GatewayError(.headTimeout)` is fired down the pipeline
/// (the connection answers 408 and closes). With no byte at all for the idle
/// timeout, the connection is closed quietly. `RequestHeadObserver`, after the
/// decoder, reports when a head is complete and when a request ends.
final class HeadTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let headerTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var awaitingHead = true
    private var inFlight = 0
    private var headerTimer: Scheduled<Void>?
    private var idleTimer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(headerTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { armIdle() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimers()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        armIdle()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimers()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if awaitingHead && headerTimer == nil {
            idleTimer?.cancel()
            idleTimer = nil
            let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
            headerTimer = context.eventLoop.scheduleTask(in: headerTimeout) {
                loopBoundSelf.value.headerTimedOut()
            }
        }
        context.fireChannelRead(data)
    }

    /// Called by `RequestHeadObserver` when a complete head was decoded.
    func headReceived() {
        awaitingHead = false
        inFlight += 1
        cancelTimers()
    }

    /// Called when the response to a request was fully written: wait for the next head.
    func exchangeFinished() {
        inFlight = max(0, inFlight - 1)
        guard inFlight == 0 else { return }
        awaitingHead = true
        armIdle()
    }

    private func headerTimedOut() {
        headerTimer = nil
        guard awaitingHead, let context else { return }
        context.fireErrorCaught(GatewayError(.headTimeout, "the request head did not arrive within \(headerTimeout.nanoseconds / 1_000_000) ms"))
    }

    private func armIdle() {
        guard let context, idleTimer == nil else { return }
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(in: idleTimeout) {
            loopBoundSelf.value.idleTimedOut()
        }
    }

    private func idleTimedOut() {
        idleTimer = nil
        guard awaitingHead, headerTimer == nil, let context else { return }
        context.close(promise: nil)
    }

    private func cancelTimers() {
        headerTimer?.cancel()
        headerTimer = nil
        idleTimer?.cancel()
        idleTimer = nil
    }
}

/// After the decoder: tells `HeadTimeoutHandler` when a head is complete.
final class RequestHeadObserver: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private let timeouts: HeadTimeoutHandler

    init(timeouts: HeadTimeoutHandler) {
        self.timeouts = timeouts
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            timeouts.headReceived()
        }
        context.fireChannelRead(data)
    }
}
