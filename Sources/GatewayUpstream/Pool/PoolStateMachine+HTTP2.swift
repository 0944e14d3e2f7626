/// The HTTP/2 half: a connection carries up to the server's
/// `SETTINGS_MAX_CONCURRENT_STREAMS` requests at once, so the machine leases
/// streams. A request takes a stream on the oldest connection with one free:
/// requests pack onto the fewest connections, and one opened for a burst falls
/// idle and closes after the idle timeout. A key opens one connection at a
/// time (a negotiating key too: its first connection's ALPN decides), and only
/// when every connection it has is full or draining, up to
/// `maxConnectionsPerKey` (draining ones not counted: they take no new stream
/// and close when their last stream ends).
extension PoolStateMachine {
    /// Opens a connection when waiters are left, none is being opened, and the
    /// key has fewer than `maxConnectionsPerKey` connections that take streams.
    mutating func createMultiplexedConnectionIfNeeded(for key: Key) -> [Action] {
        guard let keyState = keys[key], !keyState.waiters.isEmpty, keyState.connecting == 0 else { return [] }
        let taking = keyState.multiplexed.count { connections[$0]?.state == .active }
        guard taking < maxConnectionsPerKey else { return [] }
        return [newConnection(for: key, dial: .negotiate)]
    }

    /// A free stream of `key` taken at once, when nobody waits before this
    /// request (most requests on a warm connection): no waiter, no action
    /// list. Nil: then ``request(_:key:affinity:)``, which queues.
    mutating func leaseStreamNow(key: Key) -> (id: ConnectionID, wasIdle: Bool)? {
        guard !isShuttingDown, let k = keys.index(forKey: key), keys.values[k].waiters.isEmpty else { return nil }
        return leaseStream(for: key)
    }

    /// A stream on the oldest connection of `key` with one free; whether that connection was idle.
    mutating func leaseStream(for key: Key) -> (id: ConnectionID, wasIdle: Bool)? {
        guard let k = keys.index(forKey: key) else { return nil }
        for id in keys.values[k].multiplexed {
            guard let c = connections.index(forKey: id), connections.values[c].hasFreeStream else { continue }
            let wasIdle = connections.values[c].streamsInUse == 0
            connections.values[c].streamsInUse += 1
            return (id, wasIdle)
        }
        return nil
    }

    /// Gives waiters of its key streams of connection `id` while it has free ones;
    /// the first served is `firstReused` (later ones share a connection another waiter got first).
    mutating func serveWaiters(on id: ConnectionID, firstReused: Bool) -> [Action] {
        guard let c = connections.index(forKey: id) else { return [] }
        let key = connections.values[c].key
        var actions: [Action] = []
        var reused = firstReused
        while connections.values[c].hasFreeStream, let waiter = dequeueOldest(of: key) {
            connections.values[c].streamsInUse += 1
            actions += [.cancelWaiterTimeout(waiter), .useStream(id, waiter: waiter, reused: reused)]
            reused = true
        }
        return actions
    }

    /// Fails the waiters of `key` whose timeout fired meanwhile (their connection came and did not serve them).
    mutating func failOverdue(of key: Key) -> [Action] {
        guard let k = keys.index(forKey: key), !keys.values[k].overdue.isEmpty else { return [] }
        let overdue = keys.values[k].overdue
        let failed = keys.values[k].removeWaiters { overdue.contains($0) }
        for waiter in failed { waiterKeys[waiter] = nil }
        return failed.map { .failWaiter($0, .poolExhausted) }
    }

    /// The idle timer of a connection that just turned idle (or nothing, if it has streams in use).
    mutating func parkIfIdle(_ id: ConnectionID) -> [Action] {
        guard let c = connections.index(forKey: id), connections.values[c].isIdle() else { return [] }
        connections.values[c].idleGeneration += 1
        return [.scheduleIdleTimer(id, generation: connections.values[c].idleGeneration)]
    }

    /// A new HTTP/2 connection (the server's first SETTINGS came): a
    /// negotiating key speaks HTTP/2 from now on; waiters get streams, the
    /// first of them the connection's connect and TLS phases.
    mutating func establishedHTTP2(_ id: ConnectionID, key: Key, maxStreams: Int) -> [Action] {
        guard let k = keys.index(forKey: key) else { return [] }
        if keys.values[k].mode == .negotiating { keys.values[k].mode = .http2 }
        keys.values[k].multiplexed.append(id)
        updateConnection(id) { connection in
            connection.state = .active
            connection.maxStreams = max(0, maxStreams)
        }
        var actions = serveWaiters(on: id, firstReused: false)
        actions += failOverdue(of: key)
        actions += createConnectionsIfNeeded(for: key)
        return actions + parkIfIdle(id)
    }

    /// A stream of connection `id` ended (or was never opened): its slot serves
    /// the oldest waiter. A draining connection closes with its last stream.
    mutating func streamClosed(_ id: ConnectionID) -> [Action] {
        guard let c = connections.index(forKey: id), connections.values[c].streamsInUse > 0 else { return [] }
        connections.values[c].streamsInUse -= 1
        switch connections.values[c].state {
        case .draining:
            guard connections.values[c].streamsInUse == 0 else { return [] }
            let key = connections.values[c].key
            remove(id)
            forgetKeyIfUnused(key)
            return [.closeConnection(id)] + shutdownCompletedIfDone()
        case .active:
            return serveWaiters(on: id, firstReused: true) + parkIfIdle(id)
        case .connecting, .idle, .inUse:
            return []
        }
    }

    /// The server changed `SETTINGS_MAX_CONCURRENT_STREAMS`: more waiters may be
    /// served; streams above a lowered limit run to their end.
    mutating func maxStreamsChanged(_ id: ConnectionID, maxStreams: Int) -> [Action] {
        guard let c = connections.index(forKey: id), connections.values[c].state == .active else { return [] }
        connections.values[c].maxStreams = max(0, maxStreams)
        return serveWaiters(on: id, firstReused: true)
    }

    /// GOAWAY came (or the connection failed): it takes no new stream, closes
    /// when its streams end (at once when it has none), and no longer counts
    /// against the key's limit, so its waiters may get a new connection.
    mutating func goAwayReceived(_ id: ConnectionID) -> [Action] {
        guard let connection = connections[id], connection.state == .active else { return [] }
        let key = connection.key
        guard connection.streamsInUse == 0 else {
            updateConnection(id) { $0.state = .draining }
            return createConnectionsIfNeeded(for: key)
        }
        remove(id)
        let actions: [Action] = [.cancelIdleTimer(id), .closeConnection(id)] + createConnectionsIfNeeded(for: key)
        forgetKeyIfUnused(key)
        return actions
    }
}
