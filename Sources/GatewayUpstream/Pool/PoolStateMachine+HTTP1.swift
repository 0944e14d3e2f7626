/// The HTTP/1 half: a connection carries one exchange at a time; idle
/// connections are reused last-in first-out, preferring the caller's loop.
extension PoolStateMachine {
    /// Opens HTTP/1.1 connections while waiters outnumber connections being opened and the key has room.
    mutating func createHTTP1Connections(for key: Key) -> [Action] {
        var actions: [Action] = []
        while let keyState = keys[key], keyState.waiters.count > keyState.connecting, keyState.http1Total < maxConnectionsPerKey {
            actions.append(newConnection(for: key, dial: .http1))
        }
        return actions
    }

    /// Serves the oldest waiter with HTTP/1.1 connection `id`, or parks it idle.
    mutating func serveOrPark(_ id: ConnectionID, key: Key, reused: Bool) -> [Action] {
        guard let c = connections.index(forKey: id), let k = keys.index(forKey: key) else { return [] }
        if let waiter = keys.values[k].popOldest() {
            waiterKeys[waiter] = nil
            keys.values[k].inUse += 1
            connections.values[c].state = .inUse
            return [.cancelWaiterTimeout(waiter), .useConnection(id, waiter: waiter, reused: reused)]
        }
        let generation = Self.park(id, &connections.values[c], in: &keys.values[k])
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

    /// A request served at once from the idle list, without becoming a waiter
    /// (a warm pool, most requests): the connection, now in use, or nil (then
    /// ``request(_:key:affinity:)``). The caller treats its idle timer as
    /// `cancelIdleTimer` would.
    mutating func leaseIdleNow(key: Key, affinity: Int? = nil) -> ConnectionID? {
        guard !isShuttingDown else { return nil }
        return leaseIdle(for: key, affinity: affinity)
    }

    /// An exchange ended. A reusable connection serves the oldest waiter or turns
    /// idle; any other is closed, and the key may open another for its waiters.
    mutating func connectionReleased(_ id: ConnectionID, reusable: Bool) -> [Action] {
        guard let connection = connections[id], connection.state == .inUse else { return [] }
        let key = connection.key
        guard reusable, !isShuttingDown else {
            remove(id)
            let actions = [Action.closeConnection(id)] + createConnectionsIfNeeded(for: key)
            forgetKeyIfUnused(key)
            return actions + shutdownCompletedIfDone()
        }
        updateKey(key) { $0.inUse -= 1 }
        return serveOrPark(id, key: key, reused: true)
    }

    /// An exchange ended on a reusable connection and nobody waits for its key
    /// (a warm pool, most releases): the connection turns idle at once, without
    /// an action list. Returns its idle generation (the caller arms its idle
    /// timer as `scheduleIdleTimer` would), or nil: then ``connectionReleased(_:reusable:)``.
    /// Changed in place, through the dictionaries' indices: one lookup each.
    mutating func parkIdleNow(_ id: ConnectionID) -> Int? {
        guard !isShuttingDown, let c = connections.index(forKey: id), connections.values[c].state == .inUse,
            let k = keys.index(forKey: connections.values[c].key), keys.values[k].waiters.isEmpty
        else { return nil }
        keys.values[k].inUse -= 1
        return Self.park(id, &connections.values[c], in: &keys.values[k])
    }

    /// A new HTTP/1.1 connection: in a key that was negotiating (or speaking
    /// HTTP/2, and a server now answers `http/1.1`), the hand-over: the key
    /// speaks HTTP/1.1 from now on (remembered), this connection serves the
    /// oldest waiter, and more are opened for the others.
    mutating func establishedHTTP1(_ id: ConnectionID, key: Key) -> [Action] {
        guard let k = keys.index(forKey: key) else { return [] }
        guard keys.values[k].mode != .http1 else { return serveOrPark(id, key: key, reused: false) }
        keys.values[k].mode = .http1
        rememberHTTP1(key)
        var actions = serveOrPark(id, key: key, reused: false)
        actions += createHTTP1Connections(for: key)
        return actions + failOverdueNotCovered(of: key)
    }

    /// Fails the overdue waiters (their timeout fired) that no HTTP/1.1
    /// connection being opened will serve: a waiter keeps waiting only while
    /// its place in the queue is within the number of connections being opened.
    private mutating func failOverdueNotCovered(of key: Key) -> [Action] {
        guard let k = keys.index(forKey: key), !keys.values[k].overdue.isEmpty else { return [] }
        let covered = Set(keys.values[k].waiters.prefix(keys.values[k].connecting))
        let overdue = keys.values[k].overdue
        let failed = keys.values[k].removeWaiters { overdue.contains($0) && !covered.contains($0) }
        keys.values[k].overdue = []
        for waiter in failed { waiterKeys[waiter] = nil }
        return failed.map { .failWaiter($0, .poolExhausted) }
    }
}
