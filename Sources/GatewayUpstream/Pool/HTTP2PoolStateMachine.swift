/// The pool's HTTP/2 decisions, with no I/O: which connection's stream serves a
/// request, when to open or close a connection, which waiter gets a stream, and
/// what a key speaks when its `http_version` is `auto`. Events go in, actions
/// come out; `UpstreamPool` runs it under the same lock as ``PoolStateMachine``
/// and performs the actions outside it (the HTTP/2 half of async-http-client's
/// `HTTPConnectionPool.StateMachine`).
///
/// An HTTP/2 connection carries up to the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` requests at once: the machine leases
/// streams, not connections. A request takes a stream on the oldest connection
/// with one free: requests pack onto the fewest connections, so a connection
/// opened for a burst falls idle and closes after the idle timeout. A key opens
/// one connection at a time, and only when every connection it has is full or
/// draining, up to `maxConnectionsPerKey` (draining ones not counted: they take
/// no new stream and close when their last stream ends). Waiters are served
/// first in, first out, when a connection is established, a stream ends, or the
/// server raises its limit.
///
/// A key whose version is `auto` is not known to speak HTTP/2 until its first
/// connection's handshake: its requests wait for that connection like any
/// other's. If it negotiated HTTP/1.1, the oldest waiter gets it (the pool hands
/// it to ``PoolStateMachine``), the others go to the HTTP/1 side, and the key is
/// remembered (a bounded set) so its later requests go there at once.
///
/// Invariant: a key with a free stream on an active connection has no waiter.
struct HTTP2PoolStateMachine<Key: Hashable & Sendable>: Sendable {
    typealias ConnectionID = Int
    typealias WaiterID = Int
    typealias Failure = PoolStateMachine<Key>.Failure

    enum Action: Sendable, Hashable {
        /// Open a connection for `key` (its ALPN as the key says); report
        /// `connectionEstablished`, `connectionNegotiatedHTTP1` or `connectionFailed`.
        case createConnection(ConnectionID, Key)
        /// Open a stream on the connection for the waiter (its slot is taken:
        /// report `streamClosed` when the stream ends, or if it never opens).
        /// `reused`: the waiter does not get this connection's connect and TLS phases.
        case useStream(ConnectionID, waiter: WaiterID, reused: Bool)
        /// The key speaks HTTP/1.1: the waiter leases from the HTTP/1 side.
        case useHTTP1(waiter: WaiterID)
        /// The connection negotiated HTTP/1.1: it joins the HTTP/1 side, in use
        /// by `waiter` (nil: no waiter left, it joins idle). The machine forgot it.
        case adoptHTTP1(ConnectionID, Key, waiter: WaiterID?)
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
        case active
        /// GOAWAY came (or the connection failed): no new stream; closed when its last stream ends.
        case draining
    }

    struct Connection: Sendable {
        var key: Key
        var state: ConnectionState
        var maxStreams = 0
        var streamsInUse = 0
        /// Bumped each time the connection turns idle, so a stale idle timer is recognised.
        var idleGeneration = 0
        /// Where the connection runs (its event loop).
        var affinity: Int?

        var isIdle: Bool { state == .active && streamsInUse == 0 }
        var hasFreeStream: Bool { state == .active && streamsInUse < maxStreams }
    }

    struct KeyState: Sendable {
        /// Oldest first, in every state.
        var connections: [ConnectionID] = []
        var connecting = 0
        /// Oldest first.
        var waiters: [WaiterID] = []
        /// Waiters whose timeout fired while a connection was being opened: they
        /// wait for it, and fail when it does not serve them.
        var overdue: Set<WaiterID> = []

        var isUnused: Bool { connections.isEmpty && waiters.isEmpty }
    }

    /// HTTP/2 connections are numbered from here, so that one handed to the
    /// HTTP/1 side keeps its number there (``PoolStateMachine`` numbers from 0).
    static var firstConnectionID: Int { 1 << 48 }
    /// The most `auto` keys remembered as HTTP/1.1; beyond, the set starts over
    /// (a forgotten key costs one more handshake offering `h2`).
    static var http1KeyLimit: Int { 4096 }

    let maxConnectionsPerKey: Int
    var connections: [ConnectionID: Connection] = [:]
    var keys: [Key: KeyState] = [:]
    var waiterKeys: [WaiterID: Key] = [:]
    /// Keys whose first connection negotiated HTTP/1.1.
    private(set) var http1Keys: Set<Key> = []
    var isShuttingDown = false
    var shutdownReported = false
    var nextConnectionID = HTTP2PoolStateMachine.firstConnectionID

    init(maxConnectionsPerKey: Int) {
        precondition(maxConnectionsPerKey > 0, "maxConnectionsPerKey must be positive")
        self.maxConnectionsPerKey = maxConnectionsPerKey
    }

    // MARK: Counts

    /// Established connections (active or draining).
    var openConnectionCount: Int { connections.values.count { $0.state != .connecting } }
    var idleConnectionCount: Int { connections.values.count(where: \.isIdle) }
    var waiterCount: Int { waiterKeys.count }

    func connection(_ id: ConnectionID) -> Connection? { connections[id] }

    func speaksHTTP1(_ key: Key) -> Bool { http1Keys.contains(key) }

    // MARK: Shared steps

    /// A stream on the oldest connection of `key` with one free; whether that connection was idle.
    mutating func leaseStream(for key: Key) -> (id: ConnectionID, wasIdle: Bool)? {
        guard let keyState = keys[key] else { return nil }
        for id in keyState.connections {
            guard var connection = connections[id], connection.hasFreeStream else { continue }
            let wasIdle = connection.streamsInUse == 0
            connection.streamsInUse += 1
            connections[id] = connection
            return (id, wasIdle)
        }
        return nil
    }

    /// Gives waiters of its key streams of connection `id` while it has free ones;
    /// the first served is `firstReused` (later ones share a connection another waiter got first).
    mutating func serveWaiters(on id: ConnectionID, firstReused: Bool) -> [Action] {
        guard var connection = connections[id], var keyState = keys.removeValue(forKey: connection.key) else { return [] }
        var actions: [Action] = []
        var reused = firstReused
        while connection.hasFreeStream, !keyState.waiters.isEmpty {
            let waiter = keyState.waiters.removeFirst()
            keyState.overdue.remove(waiter)
            waiterKeys[waiter] = nil
            connection.streamsInUse += 1
            actions += [.cancelWaiterTimeout(waiter), .useStream(id, waiter: waiter, reused: reused)]
            reused = true
        }
        keys[connection.key] = keyState
        connections[id] = connection
        return actions
    }

    /// Opens a connection when waiters are left, none is being opened, and the
    /// key has fewer than `maxConnectionsPerKey` connections that take streams.
    mutating func createConnectionIfNeeded(for key: Key) -> [Action] {
        guard !isShuttingDown, var keyState = keys.removeValue(forKey: key) else { return [] }
        defer { keys[key] = keyState }
        guard !keyState.waiters.isEmpty, keyState.connecting == 0 else { return [] }
        let taking = keyState.connections.count { connections[$0]?.state != .draining }
        guard taking < maxConnectionsPerKey else { return [] }
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = Connection(key: key, state: .connecting)
        keyState.connections.append(id)
        keyState.connecting += 1
        return [.createConnection(id, key)]
    }

    /// Fails the waiters of `key` whose timeout fired meanwhile (their connection came and did not serve them).
    mutating func failOverdue(of key: Key) -> [Action] {
        guard var keyState = keys.removeValue(forKey: key) else { return [] }
        defer { keys[key] = keyState }
        guard !keyState.overdue.isEmpty else { return [] }
        let overdue = keyState.overdue
        keyState.overdue = []
        let failed = keyState.waiters.filter { overdue.contains($0) }
        keyState.waiters.removeAll { overdue.contains($0) }
        for waiter in failed { waiterKeys[waiter] = nil }
        return failed.map { .failWaiter($0, .poolExhausted) }
    }

    /// The idle timer of a connection that just turned idle (or nothing, if it has streams in use).
    mutating func parkIfIdle(_ id: ConnectionID) -> [Action] {
        guard var connection = connections[id], connection.isIdle else { return [] }
        connection.idleGeneration += 1
        connections[id] = connection
        return [.scheduleIdleTimer(id, generation: connection.idleGeneration)]
    }

    /// Forgets a connection in any state, keeping the key's counts right.
    mutating func remove(_ id: ConnectionID) {
        guard let connection = connections.removeValue(forKey: id), var keyState = keys.removeValue(forKey: connection.key) else { return }
        if connection.state == .connecting { keyState.connecting -= 1 }
        keyState.connections.removeAll { $0 == id }
        keys[connection.key] = keyState
    }

    mutating func forgetKeyIfUnused(_ key: Key) {
        if let keyState = keys[key], keyState.isUnused { keys[key] = nil }
    }

    mutating func enqueue(_ waiter: WaiterID, key: Key) {
        waiterKeys[waiter] = key
        var keyState = keys.removeValue(forKey: key) ?? KeyState()
        keyState.waiters.append(waiter)
        keys[key] = keyState
    }

    mutating func removeWaiter(_ waiter: WaiterID) -> Key? {
        guard let key = waiterKeys.removeValue(forKey: waiter), var keyState = keys.removeValue(forKey: key) else { return nil }
        keyState.waiters.removeAll { $0 == waiter }
        keyState.overdue.remove(waiter)
        keys[key] = keyState
        return key
    }

    mutating func rememberHTTP1(_ key: Key) {
        if http1Keys.count >= Self.http1KeyLimit { http1Keys.removeAll(keepingCapacity: true) }
        http1Keys.insert(key)
    }

    /// Once shutting down, reports completion when the last connection is gone.
    mutating func shutdownCompletedIfDone() -> [Action] {
        guard isShuttingDown, !shutdownReported, connections.isEmpty else { return [] }
        shutdownReported = true
        return [.shutdownCompleted]
    }
}
