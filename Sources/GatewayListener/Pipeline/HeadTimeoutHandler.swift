import GatewayCore
import NIOCore
import NIOHTTP1

/// Guards the wait for a request head (slowloris) and idle keep-alive connections.
///
/// Sits before the HTTP decoder and sees raw bytes. While the connection waits
/// for a request head: the first byte starts the header timer; if the head is not
/// complete when it fires, a `GatewayError(.headTimeout)` is fired down the pipeline
/// (the connection answers 408 and closes). With no byte at all for the idle
/// timeout, the connection is closed quietly. `ClientConnectionHandler`, after the
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
    /// When the head being read must be complete (set by its first byte).
    private var headerDeadline: NIODeadline?
    /// When a connection that has sent nothing since its last exchange is closed.
    private var idleDeadline: NIODeadline?
    /// One timer for both deadlines, due no later than the earliest. It is not
    /// cancelled when a deadline goes away: when it fires it re-arms for what is
    /// left, so a keep-alive request costs no timer scheduled and cancelled.
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture
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
        if awaitingHead && headerDeadline == nil {
            idleDeadline = nil
            let deadline = NIODeadline.now() + headerTimeout
            headerDeadline = deadline
            ensureTimer(by: deadline)
        }
        context.fireChannelRead(data)
    }

    /// Called by `ClientConnectionHandler` when a complete head was decoded.
    func headReceived() {
        awaitingHead = false
        inFlight += 1
        headerDeadline = nil
        idleDeadline = nil
    }

    /// Called when the response to a request was fully written: wait for the next head.
    func exchangeFinished() {
        inFlight = max(0, inFlight - 1)
        guard inFlight == 0 else { return }
        awaitingHead = true
        armIdle()
    }

    private func armIdle() {
        guard context != nil, idleDeadline == nil else { return }
        let now = NIODeadline.now()
        let deadline = now + idleTimeout
        idleDeadline = deadline
        // Due within a header timeout: the next request's first byte (usually soon)
        // then finds a timer early enough for its head and schedules none.
        ensureTimer(by: min(deadline, now + headerTimeout))
    }

    /// Makes sure a timer fires no later than `deadline`.
    private func ensureTimer(by deadline: NIODeadline) {
        guard let context else { return }
        if timer != nil && timerDeadline <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let loopBoundSelf = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            loopBoundSelf.value.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        timerDeadline = .distantFuture
        guard awaitingHead, let context else { return }
        let now = NIODeadline.now()
        if let deadline = headerDeadline {
            guard now >= deadline else { return ensureTimer(by: deadline) }
            headerDeadline = nil
            context.fireErrorCaught(GatewayError(.headTimeout, "the request head did not arrive within \(headerTimeout.nanoseconds / 1_000_000) ms"))
        } else if let deadline = idleDeadline {
            guard now >= deadline else { return ensureTimer(by: deadline) }
            idleDeadline = nil
            context.close(promise: nil)
        }
    }

    private func cancelTimers() {
        timer?.cancel()
        timer = nil
        timerDeadline = .distantFuture
        headerDeadline = nil
        idleDeadline = nil
    }
}
