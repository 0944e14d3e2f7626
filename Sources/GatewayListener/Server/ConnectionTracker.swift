import NIOConcurrencyHelpers
import NIOCore

/// The open client connections, for graceful shutdown: idle ones are closed at
/// once, busy ones finish their exchange and then close.
final class ConnectionTracker: Sendable {
    private struct Entry {
        let channel: any Channel
        var idle: Bool
        /// Ends the connection's exchange in flight (drain timeout): it answers 503 if it can.
        var abort: (@Sendable () -> Void)?
    }

    private struct State {
        var nextID = 0
        var entries: [Int: Entry] = [:]
        var draining = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())

    var count: Int { state.withLockedValue { $0.entries.count } }
    var isDraining: Bool { state.withLockedValue { $0.draining } }

    /// Registers a connection; returns nil when draining (the caller closes it).
    func add(_ channel: any Channel) -> Int? {
        state.withLockedValue { s in
            guard !s.draining else { return nil }
            s.nextID += 1
            s.entries[s.nextID] = Entry(channel: channel, idle: true)
            return s.nextID
        }
    }

    func remove(_ id: Int) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.entries[id] = nil
            guard s.entries.isEmpty else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }

    /// Marks a connection idle (waiting for a request head) or busy. Returns false
    /// when the gateway is draining and the connection should close instead.
    func setIdle(_ id: Int, _ idle: Bool) -> Bool {
        state.withLockedValue { s in
            s.entries[id]?.idle = idle
            return !s.draining
        }
    }

    /// Stops taking connections and closes the idle ones.
    func beginDraining() {
        let idle = state.withLockedValue { s -> [any Channel] in
            s.draining = true
            return s.entries.values.filter(\.idle).map(\.channel)
        }
        for channel in idle { channel.close(promise: nil) }
    }

    /// Waits until every connection is gone.
    func waitUntilEmpty() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let done = state.withLockedValue { s -> Bool in
                if s.entries.isEmpty { return true }
                s.waiters.append(c)
                return false
            }
            if done { c.resume() }
        }
    }

    /// Sets what ``abortAll()`` calls for connection `id`.
    func setAbort(_ id: Int, _ abort: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.entries[id]?.abort = abort }
    }

    /// Ends every exchange still in flight (the drain timeout passed): each
    /// answers 503 `shutting_down` if its response has not started, then closes.
    func abortAll() {
        let aborts = state.withLockedValue { $0.entries.values.compactMap(\.abort) }
        for abort in aborts { abort() }
    }

    /// Closes every connection, busy or not.
    func closeAll() {
        let all = state.withLockedValue { $0.entries.values.map(\.channel) }
        for channel in all { channel.close(promise: nil) }
    }
}
