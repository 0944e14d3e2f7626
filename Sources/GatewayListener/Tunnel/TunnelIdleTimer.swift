import NIOCore

/// The idle limit of one tunnel, shared by its two sides: each read notes
/// the time; one timer, re-armed for what is left when it fires (not per
/// read), closes the tunnel once nothing moved either way for `timeout`.
final class TunnelIdleTimer {
    let timeout: TimeAmount
    var onExpiry: (() -> Void)?
    private var lastActivity = NIODeadline.distantPast
    private var timer: Scheduled<Void>?
    private var eventLoop: (any EventLoop)?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// Starts timing (the first side added starts it; the second changes nothing).
    func start(on eventLoop: any EventLoop) {
        guard self.eventLoop == nil else { return }
        self.eventLoop = eventLoop
        lastActivity = eventLoop.now
        arm(at: lastActivity + timeout)
    }

    func activity(now: NIODeadline) {
        lastActivity = now
    }

    func stop() {
        timer?.cancel()
        timer = nil
        onExpiry = nil
    }

    private func arm(at deadline: NIODeadline) {
        guard let eventLoop else { return }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: deadline) { bound.value.fired() }
    }

    private func fired() {
        guard let eventLoop, timer != nil else { return }
        let due = lastActivity + timeout
        if eventLoop.now >= due {
            timer = nil
            onExpiry?()
        } else {
            arm(at: due)
        }
    }
}
