/// The events the pool reports, whatever the protocol; each returns the actions to perform, in order.
extension PoolStateMachine {
    /// A request wants a connection (or a stream) for `key`. Served at once by
    /// an idle HTTP/1.1 connection (`affinity`, the caller's event loop, picks
    /// one on the same loop when there is one) or a free stream, else queued
    /// (FIFO) with a timeout, opening a connection if the key's mode calls for one.
    mutating func request(_ waiter: WaiterID, key: Key, affinity: Int? = nil) -> [Action] {
        guard !isShuttingDown else { return [.failWaiter(waiter, .shuttingDown)] }
        if let id = leaseIdle(for: key, affinity: affinity) {
            return [.cancelIdleTimer(id), .useConnection(id, waiter: waiter, reused: true)]
        }
        if let leased = leaseStream(for: key) {
            let use = Action.useStream(leased.id, waiter: waiter, reused: true)
            return leased.wasIdle ? [.cancelIdleTimer(leased.id), use] : [use]
        }
        enqueue(waiter, key: key)
        return [.scheduleWaiterTimeout(waiter)] + createConnectionsIfNeeded(for: key)
    }

    /// A connection attempt succeeded (connect, TLS, ALPN, and for HTTP/2 the
    /// server's first SETTINGS): the hand-over to the half that speaks what it negotiated.
    mutating func connectionEstablished(_ id: ConnectionID, as negotiated: Negotiated, affinity: Int? = nil) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        updateKey(key) { $0.connecting -= 1 }
        guard !isShuttingDown else {
            connections[id] = nil
            forgetKeyIfUnused(key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        }
        updateConnection(id) { $0.affinity = affinity }
        switch negotiated {
        case .http1: return establishedHTTP1(id, key: key)
        case .http2(let maxStreams): return establishedHTTP2(id, key: key, maxStreams: maxStreams)
        }
    }

    /// A connection attempt failed. HTTP/1.1: the oldest waiter gets its error
    /// (it was waiting on that attempt), and the key may open another for those
    /// left. Negotiating or HTTP/2: the waiters that no active connection of
    /// the key can serve get its error (they all waited on it); the key may
    /// try again for those an active, full connection will serve later.
    mutating func connectionFailed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        remove(id)
        var failed: [WaiterID] = []
        if !isShuttingDown, let k = keys.index(forKey: key) {
            switch keys.values[k].mode {
            case .http1:
                if let waiter = keys.values[k].popOldest() { failed = [waiter] }
            case .negotiating, .http2:
                let served = keys.values[k].multiplexed.contains { connections[$0]?.state == .active }
                if !served { failed = keys.values[k].removeWaiters { _ in true } }
            }
        }
        var actions: [Action] = []
        for waiter in failed {
            waiterKeys[waiter] = nil
            actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .connectionFailed)]
        }
        actions += createConnectionsIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
    }

    /// The connection's channel closed (the peer closed an idle connection, an
    /// exchange failed, an HTTP/2 connection ended). Nothing to close; its
    /// streams fail on their own; waiters may need a new connection.
    mutating func connectionClosed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id] else { return [] }
        if connection.state == .connecting { return connectionFailed(id) }
        let key = connection.key
        remove(id)
        var actions: [Action] = connection.isIdle() ? [.cancelIdleTimer(id)] : []
        actions += createConnectionsIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
    }

    /// An idle timer fired. Closes the connection if it is still idle since that timer was scheduled.
    mutating func idleTimeoutFired(_ id: ConnectionID, generation: Int) -> [Action] {
        guard let connection = connections[id], connection.isIdle(generation: generation) else { return [] }
        remove(id)
        forgetKeyIfUnused(connection.key)
        return [.closeConnection(id)]
    }

    /// A waiter's timeout fired. A waiter that a connection being opened may
    /// serve keeps waiting: that attempt ends within the connect timeout, with
    /// a connection or an error. HTTP/1.1: its place in the queue is within the
    /// number of connections being opened. Negotiating or HTTP/2: any
    /// connection is being opened; it is marked overdue and fails then if that
    /// connection does not serve it.
    mutating func waiterTimedOut(_ waiter: WaiterID) -> [Action] {
        guard let key = waiterKeys[waiter], let k = keys.index(forKey: key),
            let position = keys.values[k].waiters.firstIndex(of: waiter)
        else { return [] }
        switch keys.values[k].mode {
        case .http1:
            if position < keys.values[k].connecting { return [] }
        case .negotiating, .http2:
            if keys.values[k].connecting > 0 {
                keys.values[k].overdue.insert(waiter)
                return []
            }
        }
        _ = removeWaiter(waiter)
        forgetKeyIfUnused(key)
        return [.failWaiter(waiter, .poolExhausted)]
    }

    /// The waiter's task (or attempt) was cancelled while it waited.
    mutating func waiterCancelled(_ waiter: WaiterID) -> [Action] {
        guard let key = removeWaiter(waiter) else { return [] }
        forgetKeyIfUnused(key)
        return [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .cancelled)]
    }

    /// Fails every waiter, closes every established connection (exchanges and
    /// streams in flight fail); connections still being opened are closed when
    /// they complete. Later requests fail.
    mutating func shutdown() -> [Action] {
        guard !isShuttingDown else { return shutdownCompletedIfDone() }
        isShuttingDown = true
        var actions: [Action] = []
        for key in keys.keys.sorted(by: { String(describing: $0) < String(describing: $1) }) {
            for waiter in keys[key]?.waiters ?? [] {
                actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .shuttingDown)]
            }
            updateKey(key) { $0.waiters = []; $0.overdue = [] }
        }
        waiterKeys = [:]
        for id in connections.keys.sorted() {
            guard let connection = connections[id], connection.state != .connecting else { continue }
            if connection.isIdle() { actions.append(.cancelIdleTimer(id)) }
            actions.append(.closeConnection(id))
            remove(id)
            forgetKeyIfUnused(connection.key)
        }
        return actions + shutdownCompletedIfDone()
    }
}
