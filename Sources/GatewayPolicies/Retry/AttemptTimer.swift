import NIOConcurrencyHelpers

/// The per-try timeout of one upstream attempt, pausable by the policies
/// inside the attempt: time a request spends queued in the gateway (local
/// token bucket, hold until an upstream's rate-limit reset) is not time the
/// upstream took, so it does not count against `per_try_timeout`. (It does
/// count against the overall `deadline`, which is not pausable.)
///
/// The retry policy binds the timer to ``AttemptTimer/current`` for the attempt;
/// a policy that waits calls ``AttemptTimer/paused(_:)``. Without a timer
/// (no per-try timeout configured) that is a plain call.
public final class AttemptTimer: Sendable {
    @TaskLocal public static var current: AttemptTimer?

    private struct State {
        var remaining: Duration
        var runningSince: ContinuousClock.Instant?
        var pauses = 0
        var nextWaiterID = 0
        var resumeWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let clock: any PolicyClock
    private let state: NIOLockedValueBox<State>

    init(limit: Duration, clock: any PolicyClock) {
        self.clock = clock
        self.state = NIOLockedValueBox(State(remaining: limit, runningSince: clock.now))
    }

    /// Runs `body` with the current attempt's timer (if any) stopped.
    public static func paused<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        guard let timer = current else { return try await body() }
        timer.pause()
        defer { timer.resume() }
        return try await body()
    }

    func pause() {
        let now = clock.now
        state.withLockedValue { s in
            s.pauses += 1
            if s.pauses == 1, let since = s.runningSince {
                s.remaining -= now - since
                s.runningSince = nil
            }
        }
    }

    func resume() {
        let now = clock.now
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.pauses -= 1
            guard s.pauses == 0 else { return [] }
            s.runningSince = now
            defer { s.resumeWaiters = [:] }
            return Array(s.resumeWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// When the attempt times out; nil while paused.
    var expiry: ContinuousClock.Instant? {
        state.withLockedValue { s in s.runningSince.map { $0 + s.remaining } }
    }

    /// Returns when the timeout has elapsed (running time only). Throws
    /// `CancellationError` when cancelled.
    func run() async throws {
        while true {
            try Task.checkCancellation()
            if let expiry {
                if clock.now >= expiry { return }
                try await clock.sleep(until: expiry, tolerance: nil)
            } else {
                await waitUntilRunning()
            }
        }
    }

    /// Suspends while paused; returns at once when running or cancelled.
    private func waitUntilRunning() async {
        let id = state.withLockedValue { s -> Int in
            s.nextWaiterID += 1
            return s.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let running = state.withLockedValue { s -> Bool in
                    if s.runningSince != nil || Task.isCancelled { return true }
                    s.resumeWaiters[id] = continuation
                    return false
                }
                if running { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.resumeWaiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}
