import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// The open client connections: for graceful shutdown (idle ones are closed
/// at once, busy ones finish their exchange and then close), and for the
/// connection caps (`limits.max_client_connections`, and
/// `max_connections_per_client` per address).
///
/// At a cap, the connection idle longest (an HTTP/1.1 keep-alive connection
/// with no request in flight, never a tunnel: ``ConnectionIdleMark``) is
/// closed to admit the new one, from the same address first for the
/// per-address cap, as nginx drains its reusable connections: one app that
/// leaks keep-alive connections from 127.0.0.1 must not lock out every other
/// app on that address. Only with no idle connection to close is the new one
/// refused; that is counted and logged (rate-limited) with the cap.
///
/// Nothing here is touched per request: each connection registers once, with
/// what to call when draining begins (its handler closes it if idle, on its own
/// loop), when the drain timeout passes, and to evict it; `isDraining` is an
/// atomic load.
final class ConnectionTracker: Sendable {
    /// What a connection's handler does when asked, each hopping to its loop itself.
    struct Callbacks: Sendable {
        /// Draining began: close now if no exchange is in flight.
        var drain: @Sendable () -> Void
        /// The drain timeout passed: answer 503 to a request in flight if possible, then close.
        var abort: @Sendable () -> Void
        /// A cap was reached and this idle connection is closed to admit another
        /// (closed after its exchange if a request came meanwhile); nil: never (tunnels, HTTP/2).
        var evict: (@Sendable () -> Void)? = nil
    }

    private struct Entry {
        let channel: any Channel
        /// The client's address, counted in `perClient`.
        let client: String
        let idle: ConnectionIdleMark?
        var callbacks: Callbacks?
        /// Counted against the caps; false once evicted (it closes on its own).
        var counted = true
    }

    private struct State {
        var nextID = 0
        var entries: [Int: Entry] = [:]
        /// Entries counted against the caps.
        var counted = 0
        /// Counted connections per client address.
        var perClient: [String: Int] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        var refusals = LogRateLimiter()
        var evictions = LogRateLimiter()

        /// The counted, evictable connection idle longest (from `client` only, if given), but `except`.
        func idlest(from client: String?, except: Int? = nil) -> Int? {
            var best: (id: Int, since: UInt64)?
            for (id, entry) in entries where entry.counted && id != except && entry.callbacks?.evict != nil {
                guard client == nil || entry.client == client, let since = entry.idle?.idleSince else { continue }
                if best == nil || since < best!.since { best = (id, since) }
            }
            return best?.id
        }

        /// No longer counted against the caps: it was evicted, or it closed.
        mutating func uncount(_ id: Int) {
            guard let entry = entries[id], entry.counted else { return }
            entries[id]?.counted = false
            counted -= 1
            let left = perClient[entry.client, default: 1] - 1
            perClient[entry.client] = left > 0 ? left : nil
        }
    }

    private let state = NIOLockedValueBox(State())
    private let draining = Atomic<Bool>(false)
    let events: any GatewayEvents
    private let logger: Logger?

    init(events: any GatewayEvents = NoGatewayEvents(), logger: Logger? = nil) {
        self.events = events
        self.logger = logger
    }

    var count: Int { state.withLockedValue { $0.entries.count } }

    /// True once shutdown began: responses say `Connection: close` and connections end after their exchange.
    var isDraining: Bool { draining.load(ordering: .relaxed) }

    /// Registers a connection from `client` (its address), whose handler keeps
    /// `idle` up to date; nil when draining already began, or when `limit`
    /// connections are open (or `perClientLimit` from that address) and none
    /// of them is idle to close in its place: the caller closes it.
    func add(
        _ channel: any Channel, client: String = "", idle: ConnectionIdleMark? = nil, limit: Int = .max, perClientLimit: Int = .max
    ) -> Int? {
        let result = state.withLockedValue { s -> Result<(id: Int, evicted: [Eviction]), Refusal> in
            guard !draining.load(ordering: .relaxed) else { return .failure(.draining) }
            // Per address first: a client at its own cap gives up its own idle connection.
            var victims: [(id: Int, cap: Refusal)] = []
            if s.perClient[client, default: 0] >= perClientLimit {
                guard let victim = s.idlest(from: client) else { return .failure(.perClient) }
                victims.append((victim, .perClient))
            }
            if s.counted - victims.count >= limit {
                guard let victim = s.idlest(from: nil, except: victims.first?.id) else { return .failure(.total) }
                victims.append((victim, .total))
            }
            var evicted: [Eviction] = []
            for victim in victims {
                guard let entry = s.entries[victim.id], let evict = entry.callbacks?.evict else { continue }
                s.uncount(victim.id)
                evicted.append(Eviction(evict: evict, client: entry.client, cap: victim.cap, unlogged: s.evictions.admit()))
            }
            s.perClient[client, default: 0] += 1
            s.counted += 1
            s.nextID += 1
            s.entries[s.nextID] = Entry(channel: channel, client: client, idle: idle)
            return .success((s.nextID, evicted))
        }
        switch result {
        case .success(let (id, evicted)):
            for eviction in evicted {
                eviction.evict()
                if let unlogged = eviction.unlogged {
                    logger?.info("closed an idle keep-alive connection from \(eviction.client) to admit a new one: \(eviction.cap.setting(total: limit, perClient: perClientLimit)) reached\(LogRateLimiter.more(unlogged))")
                }
            }
            return id
        case .failure(.draining):
            return nil
        case .failure(let cap):
            events.clientConnectionRefused(reason: cap.reason)
            if let unlogged = state.withLockedValue({ $0.refusals.admit() }) {
                logger?.warning("refused a connection from \(client): \(cap.setting(total: limit, perClient: perClientLimit)) reached and none of those connections is idle\(LogRateLimiter.more(unlogged))")
            }
            return nil
        }
    }

    private struct Eviction {
        var evict: @Sendable () -> Void
        var client: String
        var cap: Refusal
        /// Set when this eviction is logged: how many were not since the last line.
        var unlogged: Int?
    }

    private enum Refusal: Error {
        case draining, total, perClient

        /// The metric label.
        var reason: String {
            switch self {
            case .draining: "draining"
            case .total: "max_client_connections"
            case .perClient: "max_connections_per_client"
            }
        }

        /// The setting and its value, for the log.
        func setting(total: Int, perClient: Int) -> String {
            switch self {
            case .draining: "draining"
            case .total: "limits.max_client_connections (\(total))"
            case .perClient: "limits.max_connections_per_client (\(perClient) from that address)"
            }
        }
    }

    func setCallbacks(_ id: Int, _ callbacks: Callbacks) {
        state.withLockedValue { $0.entries[id]?.callbacks = callbacks }
    }

    func remove(_ id: Int) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.uncount(id)
            s.entries.removeValue(forKey: id)
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
