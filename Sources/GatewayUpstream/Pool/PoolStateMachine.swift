/// Every decision of the upstream pool, with no I/O: which connection serves a
/// request, when to open or close one, which waiter gets a connection, when a
/// waiter gives up. Events go in, actions come out; `UpstreamPool` drives it under
/// a lock and performs the actions outside it (as async-http-client's
/// `HTTPConnectionPool.StateMachine`).
///
/// Connections and waiters are plain integers: the state machine knows no channel.
/// Per key it holds at most `maxConnectionsPerKey` connections (connecting + idle +
/// in use); idle connections are reused last-in first-out; waiters are served first
/// in, first out.
///
/// Invariant: a key with an idle connection has no waiter (a connection that turns
/// idle serves the oldest waiter first).
struct PoolStateMachine<Key: Hashable & Sendable>: Sendable {
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

    enum Action: Sendable, Hashable {
        /// Open a new connection for `key`; report `connectionEstablished` or `connectionFailed`.
        case createConnection(ConnectionID, Key)
        /// Hand the connection to the waiter. `reused`: the waiter did not wait for this connection's connect.
        case useConnection(ConnectionID, waiter: WaiterID, reused: Bool)
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
        case idle(generation: Int)
        case inUse
    }

    struct Connection: Sendable {
        var key: Key
        var state: ConnectionState
        /// Bumped each time the connection turns idle, so a stale idle timer is recognised.
        var idleGeneration = 0
        /// Where the connection runs (its event loop); requests from there prefer it.
        var affinity: Int?
    }

    struct KeyState: Sendable {
        /// Idle connections, most recently used last.
        var idle: [ConnectionID] = []
        var connecting = 0
        var inUse = 0
        /// Oldest first.
        var waiters: [WaiterID] = []

        var total: Int { idle.count + connecting + inUse }
        var isUnused: Bool { total == 0 && waiters.isEmpty }
    }

    let maxConnectionsPerKey: Int
    var connections: [ConnectionID: Connection] = [:]
    var keys: [Key: KeyState] = [:]
    var waiterKeys: [WaiterID: Key] = [:]
    var isShuttingDown = false
    var shutdownReported = false
    var nextConnectionID = 0

    init(maxConnectionsPerKey: Int) {
        precondition(maxConnectionsPerKey > 0, "maxConnectionsPerKey must be positive")
        self.maxConnectionsPerKey = maxConnectionsPerKey
    }

    // MARK: Counts

    /// Established connections (idle or in use).
    var openConnectionCount: Int {
        connections.values.count { $0.state != .connecting }
    }

    var idleConnectionCount: Int {
        keys.values.reduce(0) { $0 + $1.idle.count }
    }

    var connectingCount: Int {
        keys.values.reduce(0) { $0 + $1.connecting }
    }

    var waiterCount: Int { waiterKeys.count }

    func state(of connection: ConnectionID) -> ConnectionState? {
        connections[connection]?.state
    }

    // MARK: Shared steps

    /// Opens connections while waiters outnumber connections being opened and the key has room.
    mutating func createConnectionsIfNeeded(for key: Key) -> [Action] {
        guard !isShuttingDown, var keyState = keys.removeValue(forKey: key) else { return [] }
        defer { keys[key] = keyState }
        var actions: [Action] = []
        while keyState.waiters.count > keyState.connecting && keyState.total < maxConnectionsPerKey {
            let id = nextConnectionID
            nextConnectionID += 1
            connections[id] = Connection(key: key, state: .connecting)
            keyState.connecting += 1
            actions.append(.createConnection(id, key))
        }
        return actions
    }

    /// Serves the oldest waiter with `connection`, or parks the connection idle.
    mutating func serveOrPark(_ id: ConnectionID, key: Key, reused: Bool) -> [Action] {
        guard var connection = connections[id], var keyState = keys.removeValue(forKey: key) else { return [] }
        defer { keys[key] = keyState }
        if !keyState.waiters.isEmpty {
            let waiter = keyState.waiters.removeFirst()
            waiterKeys[waiter] = nil
            keyState.inUse += 1
            connection.state = .inUse
            connections[id] = connection
            return [.cancelWaiterTimeout(waiter), .useConnection(id, waiter: waiter, reused: reused)]
        }
        let generation = Self.park(id, &connection, in: &keyState)
        connections[id] = connection
        return [.scheduleIdleTimer(id, generation: generation)]
    }

    /// Turns connection `id` idle (most recently used last); returns its new
    /// idle generation. The caller keeps `connection` (or passes it in place).
    static func park(_ id: ConnectionID, _ connection: inout Connection, in keyState: inout KeyState) -> Int {
        connection.idleGeneration += 1
        connection.state = .idle(generation: connection.idleGeneration)
        keyState.idle.append(id)
        return connection.idleGeneration
    }

    /// Forgets a connection in any state, keeping the per-key counts right.
    mutating func remove(_ id: ConnectionID) {
        guard let connection = connections.removeValue(forKey: id), var keyState = keys.removeValue(forKey: connection.key) else { return }
        switch connection.state {
        case .connecting: keyState.connecting -= 1
        case .inUse: keyState.inUse -= 1
        case .idle: keyState.idle.removeAll { $0 == id }
        }
        keys[connection.key] = keyState
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

    mutating func markShuttingDown() {
        isShuttingDown = true
    }

    mutating func removeWaiter(_ waiter: WaiterID) -> Key? {
        guard let key = waiterKeys.removeValue(forKey: waiter) else { return nil }
        updateKey(key) { $0.waiters.removeAll { $0 == waiter } }
        return key
    }

    mutating func enqueue(_ waiter: WaiterID, key: Key) {
        waiterKeys[waiter] = key
        var keyState = keys.removeValue(forKey: key) ?? KeyState()
        keyState.waiters.append(waiter)
        keys[key] = keyState
    }

    /// The most recently used idle connection, preferring one with `affinity`
    /// (same event loop as the request: no thread hop) over a more recent one.
    mutating func leaseIdle(for key: Key, affinity: Int? = nil) -> ConnectionID? {
        guard let k = keys.index(forKey: key), !keys.values[k].idle.isEmpty else { return nil }
        let position = Self.preferredIdleIndex(keys.values[k].idle, affinity: affinity, in: connections)
        let id = keys.values[k].idle.remove(at: position)
        keys.values[k].inUse += 1
        updateConnection(id) { $0.state = .inUse }
        return id
    }

    /// The last (most recently used) of `idle`, or the last one on `affinity`'s loop.
    /// Static, given the connections: a method on the machine copied the whole
    /// machine (a retain of each of its collections) on every lease.
    private static func preferredIdleIndex(_ idle: [ConnectionID], affinity: Int?, in connections: [ConnectionID: Connection]) -> Int {
        let last = idle.count - 1
        guard let affinity, connections[idle[last]]?.affinity != affinity else { return last }
        return idle.lastIndex(where: { connections[$0]?.affinity == affinity }) ?? last
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
