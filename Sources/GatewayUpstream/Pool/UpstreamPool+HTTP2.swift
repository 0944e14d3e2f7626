import GatewayCore
import NIOCore

/// The HTTP/2 side of the pool: streams leased from `HTTP2PoolStateMachine`
/// under the pool's lock, its actions turned into effects as the HTTP/1 side's
/// are (`+Actions.swift`). Keys that are `http2`, and `auto` keys not known to
/// speak HTTP/1.1, lease here (``MultiplexedAttempt``).
extension UpstreamPool {
    typealias HTTP2Action = HTTP2PoolStateMachine<UpstreamKey>.Action

    /// What a request leasing on the HTTP/2 side gets.
    enum HTTP2Lease: Sendable {
        /// A stream's slot on an HTTP/2 connection: the request opens its stream
        /// there. `reused`: no connect or TLS phase to record.
        case stream(HTTP2Connection, reused: Bool)
        /// The first connection of an `auto` key negotiated HTTP/1.1: it is this
        /// request's, in use on the HTTP/1 side.
        case http1(Lease)
        /// The key speaks HTTP/1.1: lease from the HTTP/1 side.
        case useHTTP1
    }

    struct HTTP2Waiter {
        let promise: EventLoopPromise<HTTP2Lease>
        let key: UpstreamKey
        let upstreamName: String?
    }

    /// The HTTP/2 side's machine and what its actions refer to, inside ``State``.
    struct HTTP2State {
        var machine: HTTP2PoolStateMachine<UpstreamKey>
        var waiters: [Int: HTTP2Waiter] = [:]
        var connections: [Int: HTTP2Connection] = [:]
        /// Connections opened here that negotiated HTTP/1.1, until the HTTP/1 side adopts them.
        var negotiatedHTTP1: [Int: UpstreamConnection] = [:]
        var waiterTimers: [Int: Scheduled<Void>] = [:]
        var idleTimers: [Int: Scheduled<Void>] = [:]
    }

    /// A stream for `key`, or the word to lease from the HTTP/1 side. The
    /// future is complete already when a connection has a free stream (no hop,
    /// no wait). The waiter id withdraws the request (`waiterCancelled`).
    func leaseStream(_ key: UpstreamKey, upstreamName: String?, on eventLoop: any EventLoop) -> (Int, EventLoopFuture<HTTP2Lease>) {
        let promise = eventLoop.makePromise(of: HTTP2Lease.self)
        var waiterID = 0
        runHTTP2 { s in
            s.nextWaiterID += 1
            waiterID = s.nextWaiterID
            s.http2.waiters[waiterID] = HTTP2Waiter(promise: promise, key: key, upstreamName: upstreamName)
            return s.http2.machine.request(waiterID, key: key)
        }
        return (waiterID, promise.futureResult)
    }

    /// Runs one event of the HTTP/2 side (as `run` does the HTTP/1 side's).
    func runHTTP2(connectError: (any Error)? = nil, _ event: (inout State) -> [HTTP2Action]) {
        let effects = state.withLockedValue { s in
            resolveHTTP2(event(&s), in: &s, connectError: connectError)
        }
        for effect in effects { perform(effect) }
    }

    private func resolveHTTP2(_ actions: [HTTP2Action], in s: inout State, connectError: (any Error)?) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .createConnection(let id, let key):
                let oldest = s.http2.machine.keys[key]?.waiters.first.flatMap { s.http2.waiters[$0] }
                effects.append(.connectHTTP2(id: id, key: key, upstreamName: oldest?.upstreamName))
            case .useStream(let id, let waiterID, let reused):
                guard let waiter = s.http2.waiters.removeValue(forKey: waiterID) else { continue }
                if let connection = s.http2.connections[id] {
                    effects.append(.resumeStream(waiter.promise, .success(.stream(connection, reused: reused))))
                } else {
                    let error = GatewayError(.internalError, "pool handed out an unknown HTTP/2 connection", upstream: waiter.key.upstream)
                    effects.append(.resumeStream(waiter.promise, .failure(error)))
                }
            case .useHTTP1(let waiterID):
                guard let waiter = s.http2.waiters.removeValue(forKey: waiterID) else { continue }
                effects.append(.resumeStream(waiter.promise, .success(.useHTTP1)))
            case .adoptHTTP1(let id, let key, let waiterID):
                effects += adopt(id, key: key, waiter: waiterID, in: &s)
            case .failWaiter(let waiterID, let reason):
                guard let waiter = s.http2.waiters.removeValue(forKey: waiterID) else { continue }
                let error = self.error(for: reason, key: waiter.key, connectError: connectError)
                effects.append(.resumeStream(waiter.promise, .failure(error)))
            case .scheduleWaiterTimeout(let waiterID):
                let timeout = TimeAmount(configuration.maxWaitForConnection)
                s.http2.waiterTimers[waiterID] = eventLoopGroup.any().scheduleTask(in: timeout) { [weak self] in
                    self?.runHTTP2 { $0.http2.machine.waiterTimedOut(waiterID) }
                }
            case .cancelWaiterTimeout(let waiterID):
                if let timer = s.http2.waiterTimers.removeValue(forKey: waiterID) { effects.append(.cancelTimer(timer)) }
            case .closeConnection(let id):
                if let timer = s.http2.idleTimers.removeValue(forKey: id) { effects.append(.cancelTimer(timer)) }
                if let connection = s.http2.connections.removeValue(forKey: id) {
                    effects.append(.closeHTTP2(connection))
                } else if let connection = s.http2.negotiatedHTTP1.removeValue(forKey: id) {
                    effects.append(.close(connection))
                }
            case .scheduleIdleTimer(let id, let generation):
                guard let connection = s.http2.connections[id] else { continue }
                if let old = s.http2.idleTimers[id] { effects.append(.cancelTimer(old)) }
                s.http2.idleTimers[id] = connection.eventLoop.scheduleTask(in: TimeAmount(configuration.idleTimeout)) { [weak self] in
                    self?.runHTTP2 { $0.http2.machine.idleTimeoutFired(id, generation: generation) }
                }
            case .cancelIdleTimer(let id):
                if let timer = s.http2.idleTimers.removeValue(forKey: id) { effects.append(.cancelTimer(timer)) }
            case .shutdownCompleted:
                s.http2ShutdownReported = true
                effects += s.completeShutdownIfDone()
            }
        }
        return effects
    }

    /// Hands a connection that negotiated HTTP/1.1 to the HTTP/1 side: in use by
    /// `waiterID` (its lease says so), or idle when that waiter is gone.
    private func adopt(_ id: Int, key: UpstreamKey, waiter waiterID: Int?, in s: inout State) -> [Effect] {
        guard let connection = s.http2.negotiatedHTTP1.removeValue(forKey: id) else { return [] }
        s.connections[id] = connection
        let waiter = waiterID.flatMap { s.http2.waiters.removeValue(forKey: $0) }
        let affinity = Self.affinity(of: connection.eventLoop)
        let actions = s.machine.adoptConnection(id, key: key, affinity: affinity, inUse: waiter != nil)
        var effects: [Effect] = [.watchAdopted(connection)]
        effects += resolve(actions, in: &s, connectError: nil)
        if let waiter, s.connections[id] != nil {
            effects.append(.resumeStream(waiter.promise, .success(.http1(Lease(connection: connection, reused: false)))))
        } else if let waiter {
            // Shutting down: the connection was closed by the machine.
            effects.append(.resumeStream(waiter.promise, .failure(GatewayError(.shuttingDown, "the gateway is shutting down", upstream: key.upstream))))
        }
        return effects
    }
}
