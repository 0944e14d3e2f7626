import NIOConcurrencyHelpers

/// An event that happens once (a process exited, a pipe reached EOF), awaitable with a timeout.
package final class OneShotSignal: Sendable {
    private struct State {
        var fired = false
        var waiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    package var hasFired: Bool {
        self.state.withLockedValue { $0.fired }
    }

    /// Marks the event as happened and wakes every waiter. Later calls do nothing.
    func fire() {
        let waiters = self.state.withLockedValue { state -> [CheckedContinuation<Bool, Never>] in
            guard !state.fired else { return [] }
            state.fired = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Waits for the event; false if `timeout` passes or the task is cancelled first.
    func wait(timeout: Duration) async -> Bool {
        let id = self.state.withLockedValue { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            self?.resume(id, with: false)
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let immediate = self.state.withLockedValue { state -> Bool? in
                    if state.fired { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.resume(id, with: false)
        }
    }

    private func resume(_ id: UInt64, with value: Bool) {
        let waiter = self.state.withLockedValue { $0.waiters.removeValue(forKey: id) }
        waiter?.resume(returning: value)
    }
}
