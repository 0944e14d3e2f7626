import GatewayCore
import NIOCore
import NIOHTTP1

/// Performs what the machine decided. The handler's own state (the active
/// attempt, the timer task) changes before anyone is called: the pool may start
/// the next attempt from `onRelease`, and a delegate may call back in.
extension UpstreamAttemptHandler {
    func run(_ action: UpstreamAttemptStateMachine.Action) {
        switch action {
        case .none:
            break
        case .read:
            context?.read()
        case .forwardHead(let head):
            forwardHead(head)
        case .forwardBody(let buffer):
            active?.delegate.upstreamResponseBodyPart(buffer)
        case .forwardEnd(let release):
            endAttempt(release)
        case .requestSent:
            active?.recorder.requestSent()
        case .failAttempt(let failure):
            failAttempt(gatewayError(for: failure))
        case .close:
            cancelTimer()
            context?.close(promise: nil)
        case .stopTimer:
            cancelTimer()
        case .release(let reusable):
            onRelease(reusable)
        case .upgrade(let head):
            handOver(head)
        }
        scheduleTimerIfArmed()
    }

    private func forwardHead(_ head: UpstreamResponseHead) {
        guard let active else { return }
        active.recorder.responseHead(status: Int(head.status.code))
        // The framer kept end-to-end fields only (and refused Content-Length with Transfer-Encoding).
        active.delegate.upstreamResponseHead(head)
    }

    /// Back to the pool before the delegate sees the end, so that its next
    /// request finds the connection idle. A reused connection keeps its timer
    /// task pending for the next attempt.
    private func endAttempt(_ release: UpstreamAttemptStateMachine.Release) {
        let ended = active
        active = nil
        ended?.recorder.ended()
        let reusable: Bool
        switch release {
        case .reuse(let resumeRead):
            reusable = true
            servedBefore = true
            if resumeRead { context?.read() }
        case .close:
            reusable = false
            cancelTimer()
            context?.close(promise: nil)
        }
        onRelease(reusable)
        ended?.delegate.upstreamResponseEnd()
    }

    /// A handshake's 101: the connection leaves this handler (and the pool's
    /// accounting: a connection for a handshake is never pooled) as a tunnel.
    /// The bytes read after the head go with it; the delegate splices the
    /// channel before this read's later bytes arrive.
    private func handOver(_ head: UpstreamResponseHead) {
        let upgraded = active
        active = nil
        cancelTimer()
        upgraded?.recorder.responseHead(status: Int(head.status.code))
        upgraded?.recorder.ended()
        let leftover = framer.takeUnparsed()
        guard let context, let upgraded else {
            context?.close(promise: nil)
            return
        }
        let channel = context.channel
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        upgraded.delegate.upstreamUpgraded(head, tunnel: UpstreamTunnel(channel: channel, leftover: leftover))
    }

    private func failAttempt(_ error: any Error) {
        let failed = active
        active = nil
        cancelTimer()
        // Recorded before the delegate hears of it, so that it sees the final record.
        failed?.recorder.failed(error)
        context?.close(promise: nil)
        onRelease(false)
        failed?.delegate.upstreamAttemptFailed(error)
    }

    private func gatewayError(for failure: UpstreamAttemptStateMachine.Failure) -> any Error {
        let stale = failingStale
        switch failure {
        case .error(let error):
            let failure = GatewayError.attemptFailure(error, upstream: upstream)
            guard stale, var reset = failure as? GatewayError, reset.code == .connectionReset else { return failure }
            reset.staleConnection = true
            return reset
        case .closed(let beforeHead):
            var closed = GatewayError.upstreamClosed(upstream: upstream, beforeHead: beforeHead)
            closed.staleConnection = stale
            return closed
        case .timedOut(let beforeHead):
            return timeoutError(beforeHead: beforeHead)
        case .protocolViolation(let violation):
            return GatewayError(.upstreamProtocolError, "the upstream sent a malformed response: \(violation.message)", upstream: upstream)
        }
    }
}
