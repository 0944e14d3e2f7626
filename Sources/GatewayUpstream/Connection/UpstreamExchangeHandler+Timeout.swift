import GatewayCore
import NIOCore

/// The request timeout: the longest the handler waits on the upstream without
/// progress (response head after the request was sent, the next body chunk, a write
/// to complete). Time spent waiting on the client (a slow consumer holding the
/// read, a slow request body) does not count.
extension UpstreamExchangeHandler {
    /// Whether the exchange is waiting for the upstream to do something.
    var isWaitingOnUpstream: Bool {
        guard let exchange else { return false }
        if exchange.outstandingWrites > 0 { return true }
        if exchange.awaitingHead { return exchange.requestComplete }
        return !exchange.responseComplete && !heldRead
    }

    func noteProgress() {
        lastProgress = .now()
    }

    /// Arms the timer when the exchange starts waiting on the upstream, disarms it otherwise.
    ///
    /// Disarming leaves a scheduled timer pending (it finds nothing to time when it
    /// fires), and arming reuses a pending one (it re-arms itself for the later
    /// deadline): no timer is cancelled and scheduled again for every exchange.
    func updateTimer() {
        guard isWaitingOnUpstream else {
            timerArmed = false
            return
        }
        guard !timerArmed else { return }
        timerArmed = true
        lastProgress = .now()
        if timer == nil { schedule(at: lastProgress + requestTimeout) }
    }

    /// Disarms the timer, leaving it pending (see `updateTimer`).
    func disarmTimer() {
        timerArmed = false
    }

    func cancelTimer() {
        timerArmed = false
        timer?.cancel()
        timer = nil
    }

    private func schedule(at deadline: NIODeadline) {
        guard let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        guard timerArmed, isWaitingOnUpstream else { return }
        let deadline = lastProgress + requestTimeout
        guard NIODeadline.now() >= deadline else {
            schedule(at: deadline)
            return
        }
        let beforeHead = exchange?.awaitingHead ?? false
        let seconds = Double(requestTimeout.nanoseconds) / 1e9
        fail(
            GatewayError(
                .requestTimeout,
                beforeHead
                    ? "the upstream did not answer within \(seconds)s"
                    : "the upstream stalled for \(seconds)s mid-exchange",
                upstream: upstream
            )
        )
    }
}
