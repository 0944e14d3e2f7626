/// The events of the HTTP/2 side; each returns the actions to perform, in order.
extension HTTP2PoolStateMachine {
    /// A request wants a stream for `key`: served at once on a connection with a
    /// free stream, sent to the HTTP/1 side when the key speaks HTTP/1.1, else
    /// queued (FIFO) with a timeout, opening a connection if the key needs one.
    mutating func request(_ waiter: WaiterID, key: Key) -> [Action] {
        guard !isShuttingDown else { return [.failWaiter(waiter, .shuttingDown)] }
        if http1Keys.contains(key) { return [.useHTTP1(waiter: waiter)] }
        if let leased = leaseStream(for: key) {
            let use = Action.useStream(leased.id, waiter: waiter, reused: true)
            return leased.wasIdle ? [.cancelIdleTimer(leased.id), use] : [use]
        }
        enqueue(waiter, key: key)
        return [.scheduleWaiterTimeout(waiter)] + createConnectionIfNeeded(for: key)
    }

    /// A connection speaks HTTP/2 and the server's first SETTINGS came, allowing
    /// `maxStreams` concurrent streams: waiters get streams, the first of them
    /// the connection's connect and TLS phases.
    mutating func connectionEstablished(_ id: ConnectionID, maxStreams: Int, affinity: Int? = nil) -> [Action] {
        guard var connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        connection.state = .active
        connection.maxStreams = max(0, maxStreams)
        connection.affinity = affinity
        connections[id] = connection
        updateKey(key) { $0.connecting -= 1 }
        if isShuttingDown {
            remove(id)
            forgetKeyIfUnused(key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        }
        var actions = serveWaiters(on: id, firstReused: false)
        actions += failOverdue(of: key)
        actions += createConnectionIfNeeded(for: key)
        return actions + parkIfIdle(id)
    }

    /// A connection opened for an `auto` key negotiated HTTP/1.1 (or nothing):
    /// the key is remembered as HTTP/1.1, the oldest waiter gets the connection
    /// on the HTTP/1 side, the other waiters go there too.
    mutating func connectionNegotiatedHTTP1(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        remove(id)
        if isShuttingDown {
            forgetKeyIfUnused(key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        }
        rememberHTTP1(key)
        var actions: [Action] = []
        var first: WaiterID?
        if var keyState = keys.removeValue(forKey: key) {
            for waiter in keyState.waiters {
                waiterKeys[waiter] = nil
                actions.append(.cancelWaiterTimeout(waiter))
                if first == nil {
                    first = waiter
                } else {
                    actions.append(.useHTTP1(waiter: waiter))
                }
            }
            keyState.waiters = []
            keyState.overdue = []
            keys[key] = keyState
        }
        forgetKeyIfUnused(key)
        // The adoption first: its waiter gets the connection before the others ask the HTTP/1 side.
        return [.adoptHTTP1(id, key, waiter: first)] + actions
    }

    /// A connection attempt failed. Waiters that no active connection of the
    /// key can serve get its error (they waited on it); the key may try again
    /// for those an active, full connection will serve later.
    mutating func connectionFailed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id], connection.state == .connecting else { return [] }
        let key = connection.key
        remove(id)
        var actions: [Action] = []
        if !isShuttingDown, var keyState = keys.removeValue(forKey: key) {
            let served = keyState.connections.contains { connections[$0]?.state == .active }
            if !served {
                for waiter in keyState.waiters {
                    waiterKeys[waiter] = nil
                    actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .connectionFailed)]
                }
                keyState.waiters = []
                keyState.overdue = []
            }
            keys[key] = keyState
        }
        actions += createConnectionIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
    }

    /// A stream of connection `id` ended (or was never opened): its slot serves
    /// the oldest waiter. A draining connection closes with its last stream.
    mutating func streamClosed(_ id: ConnectionID) -> [Action] {
        guard var connection = connections[id], connection.streamsInUse > 0 else { return [] }
        connection.streamsInUse -= 1
        connections[id] = connection
        switch connection.state {
        case .draining:
            guard connection.streamsInUse == 0 else { return [] }
            remove(id)
            forgetKeyIfUnused(connection.key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        case .active:
            return serveWaiters(on: id, firstReused: true) + parkIfIdle(id)
        case .connecting:
            return []
        }
    }

    /// The server changed `SETTINGS_MAX_CONCURRENT_STREAMS`: more waiters may be
    /// served; streams above a lowered limit run to their end.
    mutating func maxStreamsChanged(_ id: ConnectionID, maxStreams: Int) -> [Action] {
        guard var connection = connections[id], connection.state == .active else { return [] }
        connection.maxStreams = max(0, maxStreams)
        connections[id] = connection
        return serveWaiters(on: id, firstReused: true)
    }

    /// GOAWAY came (or the connection failed): it takes no new stream, closes
    /// when its streams end (at once when it has none), and no longer counts
    /// against the key's limit, so its waiters may get a new connection.
    mutating func goAwayReceived(_ id: ConnectionID) -> [Action] {
        guard var connection = connections[id], connection.state == .active else { return [] }
        let key = connection.key
        if connection.streamsInUse == 0 {
            remove(id)
            let actions: [Action] = [.cancelIdleTimer(id), .closeConnection(id)] + createConnectionIfNeeded(for: key)
            forgetKeyIfUnused(key)
            return actions
        }
        connection.state = .draining
        connections[id] = connection
        return createConnectionIfNeeded(for: key)
    }

    /// The connection's channel closed. Its streams fail on their own; waiters may need a new connection.
    mutating func connectionClosed(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id] else { return [] }
        if connection.state == .connecting { return connectionFailed(id) }
        let key = connection.key
        remove(id)
        var actions: [Action] = connection.isIdle ? [.cancelIdleTimer(id)] : []
        actions += createConnectionIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions + shutdownCompletedIfDone()
    }

    /// An idle timer fired: closes the connection if it is still idle since that timer was scheduled.
    mutating func idleTimeoutFired(_ id: ConnectionID, generation: Int) -> [Action] {
        guard let connection = connections[id], connection.isIdle, connection.idleGeneration == generation else { return [] }
        remove(id)
        forgetKeyIfUnused(connection.key)
        return [.closeConnection(id)]
    }

    /// A waiter's timeout fired. While a connection is being opened for its key
    /// it keeps waiting for that one (which ends within the connect timeout) and
    /// fails then if it is not served; otherwise it fails now.
    mutating func waiterTimedOut(_ waiter: WaiterID) -> [Action] {
        guard let key = waiterKeys[waiter], var keyState = keys[key], keyState.waiters.contains(waiter) else { return [] }
        if keyState.connecting > 0 {
            keyState.overdue.insert(waiter)
            keys[key] = keyState
            return []
        }
        _ = removeWaiter(waiter)
        forgetKeyIfUnused(key)
        return [.failWaiter(waiter, .poolExhausted)]
    }

    /// The waiter's attempt was cancelled while it waited.
    mutating func waiterCancelled(_ waiter: WaiterID) -> [Action] {
        guard let key = removeWaiter(waiter) else { return [] }
        forgetKeyIfUnused(key)
        return [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .cancelled)]
    }

    /// Fails every waiter, closes every established connection (streams in
    /// flight fail); connections still being opened are closed when they complete.
    mutating func shutdown() -> [Action] {
        guard !isShuttingDown else { return shutdownCompletedIfDone() }
        isShuttingDown = true
        var actions: [Action] = []
        for waiter in waiterKeys.keys.sorted() {
            actions += [.cancelWaiterTimeout(waiter), .failWaiter(waiter, .shuttingDown)]
        }
        waiterKeys = [:]
        for key in Array(keys.keys) {
            updateKey(key) { state in
                state.waiters = []
                state.overdue = []
            }
        }
        for id in connections.keys.sorted() {
            guard let connection = connections[id], connection.state != .connecting else { continue }
            if connection.isIdle { actions.append(.cancelIdleTimer(id)) }
            actions.append(.closeConnection(id))
            remove(id)
            forgetKeyIfUnused(connection.key)
        }
        return actions + shutdownCompletedIfDone()
    }

    /// Changes `key`'s state in place, if the key is known (as ``PoolStateMachine/updateKey(_:_:)``).
    mutating func updateKey(_ key: Key, _ change: (inout KeyState) -> Void) {
        guard let k = keys.index(forKey: key) else { return }
        change(&keys.values[k])
    }
}
