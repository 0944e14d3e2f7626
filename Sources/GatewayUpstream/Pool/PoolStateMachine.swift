/// Every decision of the upstream pool, with no I/O, for both upstream
/// protocols: which connection (HTTP/1.1) or stream (HTTP/2) serves a request,
/// when to open or close a connection, which waiter is served, when a waiter
/// gives up, and what a key speaks once its first connection has negotiated.
/// Events go in, actions come out; `UpstreamPool` drives it under a lock and
/// performs the actions outside it (as async-http-client's
/// `HTTPConnectionPool.StateMachine`, with its HTTP/1 and HTTP/2 halves).
///
/// Connections and waiters are plain integers, one id space each: the machine
/// knows no channel. Per key (``KeyState``) it keeps a mode (negotiating,
/// HTTP/1, HTTP/2), one waiter queue (first in, first out) and the
/// connections of both halves (`+HTTP1.swift`, `+HTTP2.swift`). A connection
/// that negotiated a protocol with ALPN is handed over here
/// (``connectionEstablished(_:as:affinity:)``).
///
/// Invariants: a key with an idle HTTP/1.1 connection has no waiter; a key
/// with a free stream on an active HTTP/2 connection has no waiter.
struct PoolStateMachine<Key: PoolKey>: Sendable {
    typealias ConnectionID = Int
    typealias WaiterID = Int

    /// Why a waiter did not get a connection.
    enum Failure: Sendable, Hashable {
        /// It waited `maxWaitForConnection` while the key was at its maximum.
        case poolExhausted
        /// The pool shut down (or was already shut down).
        case shuttingDown
        /// The connection attempt it was waiting on failed; the pool reports that attempt's error.
        case connectionFailed
        /// Its task was cancelled.
        case cancelled
    }

    /// How a new connection is opened.
    enum Dial: Sendable, Hashable {
        /// HTTP/1.1 only (ALPN `http/1.1`).
        case http1
        /// Offering what the key allows (`h2`, and `http/1.1` for `auto`), or prior-knowledge h2c.
        case negotiate
    }

    /// What a new connection turned out to speak.
    enum Negotiated: Sendable, Hashable {
        case http1
        /// With the server's `SETTINGS_MAX_CONCURRENT_STREAMS` from its first SETTINGS.
        case http2(maxStreams: Int)
    }

    enum Action: Sendable, Hashable {
        /// Open connection `id` for the key; report `connectionEstablished` or `connectionFailed`.
        case createConnection(ConnectionID, Key, Dial)
        /// Hand the HTTP/1.1 connection to the waiter. `reused`: the waiter did not wait for this connection's connect.
        case useConnection(ConnectionID, waiter: WaiterID, reused: Bool)
        /// Open a stream on the HTTP/2 connection for the waiter (its slot is
        /// taken: report `streamClosed` when the stream ends, or if it never opens).
        case useStream(ConnectionID, waiter: WaiterID, reused: Bool)
        case failWaiter(WaiterID, Failure)
        /// Report `waiterTimedOut` after `maxWaitForConnection`.
        case scheduleWaiterTimeout(WaiterID)
        case cancelWaiterTimeout(WaiterID)
        case closeConnection(ConnectionID)
        /// Report `idleTimeoutFired(id, generation:)` after `idleTimeout`.
        case scheduleIdleTimer(ConnectionID, generation: Int)
        case cancelIdleTimer(ConnectionID)
        /// After `shutdown`: the last connection is gone.
        case shutdownCompleted
    }

    enum ConnectionState: Sendable, Hashable {
        case connecting
        /// HTTP/1.1, no exchange.
        case idle(generation: Int)
        /// HTTP/1.1, one exchange.
        case inUse
        /// HTTP/2, taking streams up to `maxStreams`.
        case active
        /// HTTP/2 after GOAWAY (or a connection error): no new stream; closed when its last stream ends.
        case draining
    }

    struct Connection: Sendable {
        var key: Key
        var state: ConnectionState
        /// Bumped each time the connection turns idle, so a stale idle timer is recognised.
        var idleGeneration = 0
        /// Where the connection runs (its event loop); requests from there prefer it.
        var affinity: Int?
        /// HTTP/2: the server's limit, and the streams leased.
        var maxStreams = 0
        var streamsInUse = 0

        var hasFreeStream: Bool { state == .active && streamsInUse < maxStreams }

        /// Idle since the idle timer of `generation` (nil: any) was scheduled.
        func isIdle(generation: Int? = nil) -> Bool {
            switch state {
            case .idle(let g): generation == nil || generation == g
            case .active: streamsInUse == 0 && (generation == nil || generation == idleGeneration)
            case .connecting, .inUse, .draining: false
            }
        }
    }

    /// The most keys remembered as HTTP/1.1 after negotiating; beyond, the set
    /// starts over (a forgotten key costs one more handshake offering `h2`).
    static var http1KeyLimit: Int { 4096 }

    let maxConnectionsPerKey: Int
    var connections: [ConnectionID: Connection] = [:]
    var keys: [Key: KeyState] = [:]
    var waiterKeys: [WaiterID: Key] = [:]
    /// Keys whose connection negotiated HTTP/1.1: they start in `.http1` when they come back.
    private(set) var http1Keys: Set<Key> = []
    var isShuttingDown = false
    var shutdownReported = false
    /// One id space for connections of both protocols.
    var nextConnectionID = 0

    init(maxConnectionsPerKey: Int) {
        precondition(maxConnectionsPerKey > 0, "maxConnectionsPerKey must be positive")
        self.maxConnectionsPerKey = maxConnectionsPerKey
    }

    // MARK: Counts

    /// Established connections, of both protocols.
    var openConnectionCount: Int { connections.values.count { $0.state != .connecting } }
    /// Established HTTP/2 connections.
    var http2ConnectionCount: Int { connections.values.count { $0.state == .active || $0.state == .draining } }
    var idleConnectionCount: Int { connections.values.count { $0.isIdle() } }
    var connectingCount: Int { keys.values.reduce(0) { $0 + $1.connecting } }
    var waiterCount: Int { waiterKeys.count }

    func state(of connection: ConnectionID) -> ConnectionState? { connections[connection]?.state }
    func connection(_ id: ConnectionID) -> Connection? { connections[id] }
    func mode(of key: Key) -> KeyState.Mode? { keys[key]?.mode }
    func speaksHTTP1(_ key: Key) -> Bool { http1Keys.contains(key) }

    // MARK: Shared steps

    /// Opens what the key's mode calls for: HTTP/1.1 connections while waiters
    /// outnumber those being opened, or one connection at a time (`+HTTP2.swift`).
    mutating func createConnectionsIfNeeded(for key: Key) -> [Action] {
        guard !isShuttingDown, let k = keys.index(forKey: key) else { return [] }
        switch keys.values[k].mode {
        case .http1: return createHTTP1Connections(for: key)
        case .negotiating, .http2: return createMultiplexedConnectionIfNeeded(for: key)
        }
    }

    /// A new connection in `connecting` state, counted by its key.
    mutating func newConnection(for key: Key, dial: Dial) -> Action {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = Connection(key: key, state: .connecting)
        updateKey(key) { $0.connecting += 1 }
        return .createConnection(id, key, dial)
    }

    /// Forgets a connection in any state, keeping the key's counts right.
    mutating func remove(_ id: ConnectionID) {
        guard let connection = connections.removeValue(forKey: id) else { return }
        updateKey(connection.key) { keyState in
            switch connection.state {
            case .connecting: keyState.connecting -= 1
            case .inUse: keyState.inUse -= 1
            case .idle: keyState.idle.removeAll { $0 == id }
            case .active, .draining: keyState.multiplexed.removeAll { $0 == id }
            }
        }
    }

    /// Drops the key's bookkeeping when nothing refers to it any more.
    mutating func forgetKeyIfUnused(_ key: Key) {
        if let keyState = keys[key], keyState.isUnused { keys[key] = nil }
    }

    /// Once shutting down, reports completion when the last connection is gone.
    mutating func shutdownCompletedIfDone() -> [Action] {
        guard isShuttingDown, !shutdownReported, connections.isEmpty else { return [] }
        shutdownReported = true
        return [.shutdownCompleted]
    }

    mutating func enqueue(_ waiter: WaiterID, key: Key) {
        waiterKeys[waiter] = key
        if let k = keys.index(forKey: key) {
            keys.values[k].waiters.append(waiter)
        } else {
            var keyState = KeyState(mode: http1Keys.contains(key) ? .http1 : key.initialMode)
            keyState.waiters.append(waiter)
            keys[key] = keyState
        }
    }

    mutating func removeWaiter(_ waiter: WaiterID) -> Key? {
        guard let key = waiterKeys.removeValue(forKey: waiter) else { return nil }
        updateKey(key) { $0.removeWaiter(waiter) }
        return key
    }

    /// The key's oldest waiter, out of the queue.
    mutating func dequeueOldest(of key: Key) -> WaiterID? {
        guard let k = keys.index(forKey: key), let waiter = keys.values[k].popOldest() else { return nil }
        waiterKeys[waiter] = nil
        return waiter
    }

    mutating func rememberHTTP1(_ key: Key) {
        if http1Keys.count >= Self.http1KeyLimit { http1Keys.removeAll(keepingCapacity: true) }
        http1Keys.insert(key)
    }

    // MARK: Changing state in place

    // A key's or a connection's state changes in place, through the
    // dictionary's index (one lookup, no copy of its lists): not taken out
    // and put back (two lookups, a removal and an insertion), nor through
    // `keys[key]?.…`, whose `modify` access allocated.

    /// Changes `key`'s state, if the key is known.
    mutating func updateKey(_ key: Key, _ change: (inout KeyState) -> Void) {
        guard let k = keys.index(forKey: key) else { return }
        change(&keys.values[k])
    }

    /// Changes connection `id`, if it is known.
    mutating func updateConnection(_ id: ConnectionID, _ change: (inout Connection) -> Void) {
        guard let c = connections.index(forKey: id) else { return }
        change(&connections.values[c])
    }
}
