import NIOCore

/// The request timeout's clock inside ``UpstreamAttemptStateMachine``: armed
/// while the exchange waits on the upstream (a write to complete, the response
/// head once the request is sent, the next body part), it expires when the
/// upstream made no progress for `timeout`. Time spent waiting on the client (a
/// slow consumer holding the read, a slow request body) does not count.
///
/// Only values here: the handler keeps one scheduled task pending while the
/// clock is armed. Disarming leaves that task pending (it finds nothing to time
/// when it fires) and arming reuses it (it is scheduled again for the later
/// deadline when it fires early), so a reused connection does not cancel and
/// schedule a task for every exchange.
struct UpstreamRequestTimeout: Equatable {
    let timeout: TimeAmount
    private(set) var isArmed = false
    /// When the upstream last made progress, or the clock was armed.
    private(set) var lastProgress = NIODeadline.uptimeNanoseconds(0)

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    /// When the armed clock expires; nil while disarmed.
    var deadline: NIODeadline? {
        isArmed ? lastProgress + timeout : nil
    }

    /// Arms the clock when the exchange starts waiting on the upstream (an armed
    /// clock keeps its last progress), disarms it when it stops.
    mutating func update(waitingOnUpstream: Bool, now: NIODeadline) {
        guard waitingOnUpstream else {
            isArmed = false
            return
        }
        guard !isArmed else { return }
        isArmed = true
        lastProgress = now
    }

    /// The upstream did something (a write completed, a response part arrived).
    mutating func progress(now: NIODeadline) {
        lastProgress = now
    }

    mutating func disarm() {
        isArmed = false
    }

    /// Whether the armed clock has run out at `now`.
    func hasExpired(now: NIODeadline) -> Bool {
        isArmed && now >= lastProgress + timeout
    }
}
