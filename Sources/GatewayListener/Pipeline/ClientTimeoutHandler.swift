import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// Runs a client connection's ``ClientTimeoutStateMachine`` with one timer:
/// the head (slowloris), idle keep-alive connections, the pauses of a request
/// body, and a client that does not read its response.
///
/// Sits before the HTTP decoder and sees raw bytes; `ClientConnectionHandler`,
/// after the decoder, reports heads, the end of request bodies, held reads
/// and finished exchanges. A head or body timeout is fired down the pipeline
/// as a `GatewayError` (the connection answers 408 and closes); so is a send
/// timeout, on which the connection closes at once (nothing can reach a
/// client that does not read);
/// an idle connection is closed quietly.
///
/// Inbound only: the response's writes and flushes do not pass through it.
final class ClientTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private var machine: ClientTimeoutStateMachine
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture
    private var context: ChannelHandlerContext?

    init(limits: ClientTimeoutStateMachine.Limits) {
        machine = ClientTimeoutStateMachine(limits: limits)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { run(machine.connected(now: now)) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        run(machine.connected(now: now))
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        run(machine.bytesRead(now: now))
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        run(machine.writabilityChanged(writable: context.channel.isWritable, now: now))
        context.fireChannelWritabilityChanged()
    }

    // MARK: Told by the client connection's handler

    func headReceived(bodyFollows: Bool) {
        run(machine.headReceived(bodyFollows: bodyFollows, now: bodyFollows ? now : .distantPast))
    }

    func requestEnded() {
        machine.requestEnded()
    }

    func readsHeld(_ held: Bool) {
        run(machine.readsHeld(held, now: now))
    }

    func exchangeFinished() {
        run(machine.exchangeFinished(now: now))
    }

    /// The loop's clock (a test's embedded loop moves it by hand).
    private var now: NIODeadline { context?.eventLoop.now ?? .now() }

    // MARK: Running actions

    private func run(_ action: ClientTimeoutStateMachine.Action) {
        guard let context else { return }
        switch action {
        case .none:
            break
        case .armTimer(let deadline):
            ensureTimer(by: deadline, context: context)
        case .expired(.head):
            context.fireErrorCaught(GatewayError(.headTimeout, "the request head did not arrive within \(Self.format(machine.limits.header))"))
        case .expired(.body):
            context.fireErrorCaught(GatewayError(.bodyTimeout, "the client sent no request body for \(Self.format(machine.limits.body)) (limits.body_timeout)"))
        case .expired(.send):
            context.fireErrorCaught(GatewayError(.sendTimeout, "the client did not read its response for \(Self.format(machine.limits.send)) (limits.send_timeout)"))
        case .closeIdle:
            context.close(promise: nil)
        }
    }

    /// Makes sure a timer fires no later than `deadline`.
    private func ensureTimer(by deadline: NIODeadline, context: ChannelHandlerContext) {
        if timer != nil && timerDeadline <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            bound.value.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        timerDeadline = .distantFuture
        run(machine.timerFired(now: now))
    }

    private func stop() {
        timer?.cancel()
        timer = nil
        timerDeadline = .distantFuture
        machine.stopped()
    }

    static func format(_ amount: TimeAmount) -> String {
        ConfigUnits.formatDuration(.nanoseconds(amount.nanoseconds))
    }
}
