import GatewayCore
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// The open client connections, for graceful shutdown: idle ones are closed at
/// once, busy ones finish their exchange and then close.
///
/// Nothing here is touched per request: each connection registers once, with
/// what to call when draining begins (its handler closes it if idle, on its own
/// loop) and when the drain timeout passes; `isDraining` is an atomic load.
final class ConnectionTracker: Sendable {
    /// What a connection's handler does when asked, each hopping to its loop itself.
    struct Callbacks: Sendable {
        /// Draining began: close now if no exchange is in flight.
        var drain: @Sendable () -> Void
        /// The drain timeout passed: answer 503 to a request in flight if possible, then close.
        var abort: @Sendable () -> Void
    }

    private struct Entry {
        let channel: any Channel
        /// The client's address, counted in `perClient`.
        let client: String
        var callbacks: Callbacks?
    }

    private struct State {
        var nextID = 0
        var entries: [Int: Entry] = [:]
        /// Open connections per client address.
        var perClient: [String: Int] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = NIOLockedValueBox(State())
    private let draining = Atomic<Bool>(false)
    private let events: any GatewayEvents

    init(events: any GatewayEvents = NoGatewayEvents()) {
        self.events = events
    }

    var count: Int { state.withLockedValue { $0.entries.count } }

    /// True once shutdown began: responses say `Connection: close` and connections end after their exchange.
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Registers a connection from `client` (its address); nil when draining
    /// already began, `limit` connections are open, or `perClientLimit` from
    /// that address (both counted): the caller closes it.
    func add(_ channel: any Channel, client: String = "", limit: Int = .max, perClientLimit: Int = .max) -> Int? {
        let result = state.withLockedValue { s -> Result<Int, Refusal> in
            guard !draining.load(ordering: .relaxed) else { return .failure(.draining) }
            guard s.entries.count < limit else { return .failure(.total) }
            let fromClient = s.perClient[client, default: 0]
            guard fromClient < perClientLimit else { return .failure(.perClient) }
            s.perClient[client] = fromClient + 1
            s.nextID += 1
            s.entries[s.nextID] = Entry(channel: channel, client: client)
            return .success(s.nextID)
        }
        switch result {
        case .success(let id): return id
        case .failure(.draining): return nil
        case .failure(.total): events.clientConnectionRefused(reason: "max_client_connections")
        case .failure(.perClient): events.clientConnectionRefused(reason: "max_connections_per_client")
        }
        return nil
    }

    private enum Refusal: Error {
        case draining, total, perClient
    }

    func setCallbacks(_ id: Int, _ callbacks: Callbacks) {
        state.withLockedValue { $0.entries[id]?.callbacks = callbacks }
    }

    func remove(_ id: Int) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            if let entry = s.entries.removeValue(forKey: id) {
                let left = s.perClient[entry.client, default: 1] - 1
                s.perClient[entry.client] = left > 0 ? left : nil
            }
            guard s.entries.isEmpty else { return [] }
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }

    /// Stops new connections and closes the idle ones (each decides on its loop;
    /// a connection without a handler yet is closed outright).
    func beginDraining() {
        let entries = state.withLockedValue { s -> [Entry] in
            draining.store(true, ordering: .relaxed)
            return Array(s.entries.values)
        }
        for entry in entries {
            if let drain = entry.callbacks?.drain {
                drain()
            } else {
                entry.channel.close(promise: nil)
            }
        }
    }

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

    func abortAll() {
        let aborts = state.withLockedValue { $0.entries.values.compactMap(\.callbacks?.abort) }
        for abort in aborts { abort() }
    }

    func closeAll() {
        let all = state.withLockedValue { $0.entries.values.map(\.channel) }
        for channel in all { channel.close(promise: nil) }
    }
}
