/// The events the pool reports; each returns the actions to perform, in order.
extension PoolStateMachine {
    /// A request wants a connection for `key`. Served at once from the idle list,
    /// else queued (FIFO) with a timeout, opening a connection if the key has room.
    /// `affinity` (the caller's event loop) picks an idle connection on the same loop when there is one.
    mutating func request(_ waiter: WaiterID, key: Key, affinity: Int? = nil) -> [Action] {
        guard !isShuttingDown else { return [.failWaiter(waiter, .shuttingDown)] }
        if let id = leaseIdle(for: key, affinity: affinity) {
            return [.cancelIdleTimer(id), .useConnection(id, waiter: waiter, reused: true)]
        }
        enqueue(waiter, key: key)
        return [.scheduleWaiterTimeout(waiter)] + createConnectionsIfNeeded(for: key)
    }

    /// A request served at once from the idle list, without becoming a waiter
    /// (a warm pool, most requests): the connection, now in use, or nil (then
    /// ``request(_:key:affinity:)``). The caller treats its idle timer as
    /// `cancelIdleTimer` would.
    mutating func leaseIdleNow(key: Key, affinity: Int? = nil) -> ConnectionID? {
        guard !isShuttingDown else { return nil }
        return leaseIdle(for: key, affinity: affinity)
    }

    /// A connection attempt succeeded (connect, TLS and pipeline ready).
    mutating func connectionEstablished(_ id: ConnectionID, affinity: Int? = nil) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        updateConnection(id) { $0.affinity = affinity }
        updateKey(key) { $0.connecting -= 1 }
        if isShuttingDown {
            connections[id] = nil
            forgetKeyIfUnused(key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        }
        return serveOrPark(id, key: key, reused: false)
    }

    /// A connection attempt failed: the oldest waiter gets its error (it was waiting
    /// on an attempt in flight), and the key may open another for those left.
    mutating func connectionFailed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        remove(id)
        var actions: [Action] = []
        if !isShuttingDown, var keyState = keys.removeValue(forKey: key) {
            let waiter = keyState.waiters.isEmpty ? nil : keyState.waiters.removeFirst()
            keys[key] = keyState
            if let waiter {
                waiterKeys[waiter] = nil
                actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .connectionFailed)]
            }
        }
        actions += createConnectionsIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
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

    /// The connection's channel closed (peer closed an idle connection, or an
    /// exchange failed). Nothing to close; waiters may need a new connection.
    mutating func connectionClosed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id] else { return [] }
        let key = connection.key
        let wasIdle: Bool
        if case .idle = connection.state { wasIdle = true } else { wasIdle = false }
        let wasConnecting = connection.state == .connecting
        if wasConnecting { return connectionFailed(id) }
        remove(id)
        var actions: [Action] = wasIdle ? [.cancelIdleTimer(id)] : []
        actions += createConnectionsIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
    }

    /// An idle timer fired. Closes the connection if it is still idle since that timer was scheduled.
    mutating func idleTimeoutFired(_ id: ConnectionID, generation: Int) -> [Action] {
        guard let connection = connections[id], connection.state == .idle(generation: generation) else { return [] }
        remove(id)
        forgetKeyIfUnused(connection.key)
        return [.closeConnection(id)]
    }

    /// A waiter's timeout fired. A waiter that an attempt in flight will serve (its
    /// place in the queue is within the number of connections being opened) keeps
    /// waiting: that attempt ends within the connect timeout, with a connection or an error.
    mutating func waiterTimedOut(_ waiter: WaiterID) -> [Action] {
        guard let key = waiterKeys[waiter], let keyState = keys[key],
            let position = keyState.waiters.firstIndex(of: waiter)
        else { return [] }
        if position < keyState.connecting { return [] }
        _ = removeWaiter(waiter)
        forgetKeyIfUnused(key)
        return [.failWaiter(waiter, .poolExhausted)]
    }

    /// The waiter's task was cancelled while it waited.
    mutating func waiterCancelled(_ waiter: WaiterID) -> [Action] {
        guard let key = removeWaiter(waiter) else { return [] }
        forgetKeyIfUnused(key)
        return [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .cancelled)]
    }

    /// Fails every waiter, closes every idle and in-use connection; connections
    /// still being opened are closed when they complete. Later requests fail.
    mutating func shutdown() -> [Action] {
        guard !isShuttingDown else { return shutdownCompletedIfDone() }
        markShuttingDown()
        var actions: [Action] = []
        for key in keys.keys.sorted(by: { String(describing: $0) < String(describing: $1) }) {
            guard var keyState = keys[key] else { continue }
            for waiter in keyState.waiters {
                waiterKeys[waiter] = nil
                actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .shuttingDown)]
            }
            keyState.waiters = []
            keys[key] = keyState
        }
        for id in connections.keys.sorted() {
            guard let connection = connections[id] else { continue }
            switch connection.state {
            case .connecting:
                continue
            case .idle:
                actions += [.cancelIdleTimer(id), .closeConnection(id)]
            case .inUse:
                actions.append(.closeConnection(id))
            }
            remove(id)
            forgetKeyIfUnused(connection.key)
        }
        return actions + shutdownCompletedIfDone()
    }
}
