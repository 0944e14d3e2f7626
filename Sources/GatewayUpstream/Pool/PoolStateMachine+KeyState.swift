/// What the pool needs of a key besides identity: what its connections speak
/// before any has negotiated.
protocol PoolKey: Hashable, Sendable {
    var initialMode: PoolKeyMode { get }
}

/// What a key's connections speak, as far as the pool knows.
enum PoolKeyMode: Sendable, Hashable {
    /// `auto`: the first connection offers `h2` and `http/1.1`; it is opened alone and its ALPN decides.
    case negotiating
    /// Requests lease whole connections, up to `maxConnectionsPerKey` opened at once.
    case http1
    /// Requests lease streams; one connection is opened at a time, when every other is full.
    case http2
}

extension UpstreamKey: PoolKey {
    /// `http1` keys (and plain `auto`, which is `http1`) speak HTTP/1.1;
    /// `http2` keys speak HTTP/2 (ALPN `h2`, or prior knowledge); `auto` over
    /// https negotiates on its first connection.
    var initialMode: PoolKeyMode {
        switch httpVersion {
        case .http1: .http1
        case .http2: .http2
        case .auto: .negotiating
        }
    }
}

extension PoolStateMachine {
    /// One key's part of the pool: its mode, its one waiter queue, and the
    /// connections of its HTTP/1 and HTTP/2 halves.
    struct KeyState: Sendable {
        typealias Mode = PoolKeyMode

        var mode: Mode
        /// Oldest first, whatever they will get (a connection or a stream).
        var waiters: [WaiterID] = []
        /// Waiters whose timeout fired while a connection was being opened that
        /// may serve them: they wait for it, and fail when it does not.
        var overdue: Set<WaiterID> = []
        /// Connections being opened, of either kind.
        var connecting = 0
        /// HTTP/1 half: idle connections, most recently used last, and the count in use.
        var idle: [ConnectionID] = []
        var inUse = 0
        /// HTTP/2 half: established connections (active or draining), oldest first.
        var multiplexed: [ConnectionID] = []

        init(mode: Mode) {
            self.mode = mode
        }

        /// HTTP/1.1 connections, counted against `maxConnectionsPerKey` with those being opened.
        var http1Total: Int { idle.count + connecting + inUse }
        var isUnused: Bool { http1Total == 0 && multiplexed.isEmpty && waiters.isEmpty }

        mutating func popOldest() -> WaiterID? {
            guard !waiters.isEmpty else { return nil }
            let waiter = waiters.removeFirst()
            overdue.remove(waiter)
            return waiter
        }

        mutating func removeWaiter(_ waiter: WaiterID) {
            waiters.removeAll { $0 == waiter }
            overdue.remove(waiter)
        }

        /// Takes the waiters `remove` picks out of the queue, oldest first.
        mutating func removeWaiters(where remove: (WaiterID) -> Bool) -> [WaiterID] {
            let removed = waiters.filter(remove)
            guard !removed.isEmpty else { return [] }
            waiters.removeAll(where: remove)
            for waiter in removed { overdue.remove(waiter) }
            return removed
        }
    }
}
