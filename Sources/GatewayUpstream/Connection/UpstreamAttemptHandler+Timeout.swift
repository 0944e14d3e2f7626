import GatewayCore
import NIOCore

/// The request timeout's task: the machine's ``UpstreamRequestTimeout`` says
/// when it is armed and until when; here one task is kept scheduled meanwhile.
///
/// Disarming leaves the task pending (it finds nothing to time when it fires),
/// and arming reuses a pending one (when it fires before the later deadline, it
/// is scheduled again for it): no task is cancelled and scheduled again for every
/// attempt on a reused connection. Only a failed or closed connection cancels it.
extension UpstreamAttemptHandler {
    /// Schedules the task when the timeout is armed and none is pending. Called
    /// after every event the machine handled.
    func scheduleTimerIfArmed() {
        guard timer == nil, let deadline = machine.timeout.deadline, let context else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timerFired()
        }
    }

    func cancelTimer() {
        timer?.cancel()
        timer = nil
    }

    private func timerFired() {
        timer = nil
        // Not run out yet: `run` schedules the task again for the new deadline.
        run(machine.timerFired(now: eventLoop.now))
    }

    func timeoutError(beforeHead: Bool) -> GatewayError {
        let seconds = Double(requestTimeout.nanoseconds) / 1e9
        return GatewayError(
            .requestTimeout,
            beforeHead
                ? "the upstream did not answer within \(seconds)s"
                : "the upstream stalled for \(seconds)s mid-exchange",
            upstream: upstream
        )
    }
}
