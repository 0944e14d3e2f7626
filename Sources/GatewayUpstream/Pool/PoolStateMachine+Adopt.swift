/// A connection opened by the HTTP/2 side joins the HTTP/1 side.
extension PoolStateMachine {
    /// A connection the HTTP/2 side opened for an `auto` key, which negotiated
    /// HTTP/1.1, joins the pool under its own id: in use by the request that
    /// waited for it (`inUse`), else it serves the oldest waiter or turns idle.
    /// It counts against `maxConnectionsPerKey` like the others (a key whose
    /// protocol was forgotten while it had connections may hold one more for a
    /// while). While shutting down it is closed.
    mutating func adoptConnection(_ id: ConnectionID, key: Key, affinity: Int?, inUse: Bool) -> [Action] {
        guard !isShuttingDown else { return [.closeConnection(id)] }
        connections[id] = Connection(key: key, state: .inUse, affinity: affinity)
        var keyState = keys.removeValue(forKey: key) ?? KeyState()
        if inUse { keyState.inUse += 1 }
        keys[key] = keyState
        return inUse ? [] : serveOrPark(id, key: key, reused: true)
    }
}
