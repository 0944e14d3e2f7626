import GatewayConfig
import GatewayCore
import NIOCore

/// Who a ``ClientTimeouts`` reports to: an HTTP/1.1 connection, or one HTTP/2 stream.
protocol ClientTimeoutOwner: AnyObject {
    /// A head, body or send timeout expired.
    func timedOut(_ error: GatewayError)
    /// Writes held for a batched flush go out (before an idle connection closes).
    func flushDeferred()
}

/// Runs a client's ``ClientTimeoutStateMachine`` with one timer: the head
/// (slowloris), idle keep-alive connections, the pauses of a request body,
/// and a client that does not read its response.
///
/// Not a handler of its own: ``ClientConnectionHandler`` owns one per HTTP/1.1
/// connection and tells it of raw bytes read (before they are framed), heads,
/// the end of request bodies, held reads and finished exchanges; an
/// ``ClientHTTP2Stream`` owns one per stream, for the body and send timeouts
/// only (the connection's idle and head limits are its own). A head or body
/// timeout goes to the owner as a `GatewayError` (it answers 408); so does a
/// send timeout, on which the connection (or stream) ends at once (nothing can
/// reach a client that does not read); an idle connection is closed quietly.
final class ClientTimeouts {
    private var machine: ClientTimeoutStateMachine
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture
    private var context: ChannelHandlerContext?
    /// A stream's loop (a stream has no context of its own, nor an idle limit).
    private var eventLoop: (any EventLoop)?
    /// Where an expiry goes (``ClientConnectionHandler/timedOut(_:)``), from
    /// ``attach(_:owner:)`` to ``detach()``. Strong, and broken by `detach`
    /// (the owner's `handlerRemoved`, which every pipeline's teardown calls),
    /// as the context's is: a weak reference gave the handler a side table,
    /// and every retain and release of it (several per request) took the
    /// runtime's slow path.
    private var owner: (any ClientTimeoutOwner)?

    init(limits: ClientTimeoutStateMachine.Limits) {
        machine = ClientTimeoutStateMachine(limits: limits)
    }

    /// The owner joined a pipeline; `connected` when its channel is active
    /// already (a connection's, for its idle limit; a stream's is not).
    func attach(_ context: ChannelHandlerContext, owner: any ClientTimeoutOwner, isConnection: Bool = true) {
        self.context = context
        self.owner = owner
        if isConnection, context.channel.isActive { connected() }
    }

    /// An HTTP/2 stream's timeouts (body and send): on its connection's loop.
    func attach(stream eventLoop: any EventLoop, owner: any ClientTimeoutOwner) {
        self.eventLoop = eventLoop
        self.owner = owner
    }

    /// The owner left the pipeline, or its channel closed: no timer runs any more.
    func detach() {
        stop()
        context = nil
        eventLoop = nil
        owner = nil
    }

    func connected() {
        run(machine.connected(now: now))
    }

    func channelClosed() {
        stop()
    }

    /// Raw bytes came in (before they are framed).
    func bytesRead() {
        run(machine.bytesRead(now: now))
    }

    func writabilityChanged(writable: Bool) {
        run(machine.writabilityChanged(writable: writable, now: now))
    }

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
    private var now: NIODeadline { (context?.eventLoop ?? eventLoop)?.now ?? .now() }

    // MARK: Running actions

    private func run(_ action: ClientTimeoutStateMachine.Action) {
        guard let eventLoop = context?.eventLoop ?? eventLoop else { return }
        switch action {
        case .none:
            break
        case .armTimer(let deadline):
            ensureTimer(by: deadline, on: eventLoop)
        case .expired(.head):
            owner?.timedOut(GatewayError(.headTimeout, "the request head did not arrive within \(Self.format(machine.limits.header))"))
        case .expired(.body):
            owner?.timedOut(GatewayError(.bodyTimeout, "the client sent no request body for \(Self.format(machine.limits.body)) (limits.body_timeout)"))
        case .expired(.send):
            owner?.timedOut(GatewayError(.sendTimeout, "the client did not read its response for \(Self.format(machine.limits.send)) (limits.send_timeout)"))
        case .closeIdle:
            owner?.flushDeferred()
            context?.close(promise: nil)
        }
    }

    /// Makes sure a timer fires no later than `deadline`.
    private func ensureTimer(by deadline: NIODeadline, on eventLoop: any EventLoop) {
        if timer != nil && timerDeadline <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: deadline) {
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
