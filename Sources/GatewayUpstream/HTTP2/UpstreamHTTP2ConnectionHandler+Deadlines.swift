import NIOCore

/// The streams' request timeouts on one timer per connection, not one per
/// stream. A stream's timer was scheduled when it opened and cancelled when
/// it ended, and NIO cancels by searching its heap of scheduled tasks: with
/// 500 streams in flight that search was 4% of an intercepted h2 request's CPU.
///
/// Here a stream only says when it is due next (``ensureTimer(by:)``, a
/// comparison when the timer is due earlier already, as it nearly always is:
/// every stream's deadline is its start plus the same timeout). When the timer
/// fires, every open stream whose deadline passed hears it (its machine
/// decides: it fails, or it made progress and is due later), the others say
/// when they are due again, and the timer is set for the earliest. A stream
/// that ended is out of the table: nothing to cancel.
extension UpstreamHTTP2ConnectionHandler: NIOScheduledCallbackHandler {
    /// Makes sure the timer fires no later than `deadline`.
    func ensureTimer(by deadline: NIODeadline) {
        if timer != nil, timerDeadline <= deadline { return }
        timer?.cancel()
        timerDeadline = deadline
        timer = try? eventLoop.assumeIsolated().scheduleCallback(at: deadline, handler: self)
    }

    func stopTimer() {
        timer?.cancel()
        timer = nil
        timerDeadline = .distantFuture
    }

    func handleScheduledCallback(eventLoop: some EventLoop) {
        timer = nil
        timerDeadline = .distantFuture
        guard !streams.isEmpty else { return }
        let now = eventLoop.now
        // A copy: a stream that times out leaves the table meanwhile.
        for stream in Array(streams.values) { stream.deadlineCheck(now: now) }
    }
}
