import GatewayCore
import Logging
import NIOCore

/// Drives the state machine: an event under the lock, its actions turned into
/// effects (continuations and connections looked up, timers scheduled), effects
/// performed after the lock is released.
extension UpstreamPool {
    typealias Action = PoolStateMachine<UpstreamKey>.Action

    enum Effect {
        case resume(EventLoopPromise<PoolLease>, Result<PoolLease, any Error>)
        case connect(id: Int, key: UpstreamKey, upstreamName: String?, dial: PoolStateMachine<UpstreamKey>.Dial)
        case close(UpstreamConnection)
        case closeHTTP2(HTTP2Connection)
        case cancelTimer(Scheduled<Void>)
        case completeShutdown([CheckedContinuation<Void, Never>])
    }

    /// Runs one event. `connectError` is the error reported to a waiter failed with `.connectionFailed`.
    func run(connectError: (any Error)? = nil, _ event: (inout State) -> [Action]) {
        let effects = state.withLockedValue { s in
            resolve(event(&s), in: &s, connectError: connectError)
        }
        for effect in effects { perform(effect) }
    }

    func resolve(_ actions: [Action], in s: inout State, connectError: (any Error)?) -> [Effect] {
        var effects: [Effect] = []
        for action in actions {
            switch action {
            case .createConnection(let id, let key, let dial):
                let oldest = s.machine.keys[key]?.waiters.first.flatMap { s.waiters[$0] }
                effects.append(.connect(id: id, key: key, upstreamName: oldest?.upstreamName, dial: dial))
            case .useConnection(let id, let waiterID, let reused):
                guard let waiter = s.waiters.removeValue(forKey: waiterID) else { continue }
                effects.append(.resume(waiter.promise, s.lease(id, reused: reused, key: waiter.key).map(PoolLease.http1)))
            case .useStream(let id, let waiterID, let reused):
                guard let waiter = s.waiters.removeValue(forKey: waiterID) else { continue }
                effects.append(.resume(waiter.promise, s.stream(id, reused: reused, key: waiter.key)))
            case .failWaiter(let waiterID, let reason):
                guard let waiter = s.waiters.removeValue(forKey: waiterID) else { continue }
                let error = self.error(for: reason, key: waiter.key, connectError: connectError)
                effects.append(.resume(waiter.promise, .failure(error)))
            case .scheduleWaiterTimeout(let waiterID):
                let timeout = TimeAmount(configuration.maxWaitForConnection)
                s.waiterTimers[waiterID] = eventLoopGroup.any().scheduleTask(in: timeout) { [weak self] in
                    self?.run { $0.machine.waiterTimedOut(waiterID) }
                }
            case .cancelWaiterTimeout(let waiterID):
                if let timer = s.waiterTimers.removeValue(forKey: waiterID) { effects.append(.cancelTimer(timer)) }
            case .closeConnection(let id):
                if let timer = s.idleTimers.removeValue(forKey: id) { effects.append(.cancelTimer(timer.scheduled)) }
                if let connection = s.connections.removeValue(forKey: id) { effects.append(.close(connection)) }
                if let connection = s.http2Connections.removeValue(forKey: id) { effects.append(.closeHTTP2(connection)) }
            case .scheduleIdleTimer(let id, let generation):
                armIdleTimer(id, generation: generation, in: &s)
            case .cancelIdleTimer(let id):
                if s.eventLoop(of: id) != nil {
                    s.endIdlePeriod(of: id)
                } else if let timer = s.idleTimers.removeValue(forKey: id) {
                    effects.append(.cancelTimer(timer.scheduled))
                }
            case .shutdownCompleted:
                effects += s.completeShutdown()
            }
        }
        return effects
    }

    /// Starts connection `id`'s idle period `generation` (under the lock).
    func armIdleTimer(_ id: Int, generation: Int, in s: inout State) {
        guard let eventLoop = s.eventLoop(of: id) else { return }
        let deadline = NIODeadline.now() + TimeAmount(configuration.idleTimeout)
        if let t = s.idleTimers.index(forKey: id) {
            // Still pending, due no later than `deadline`: it re-arms itself then.
            // Changed in place, through the index (one lookup).
            s.idleTimers.values[t].generation = generation
            s.idleTimers.values[t].deadline = deadline
        } else {
            let scheduled = scheduleIdleCheck(id, on: eventLoop, at: deadline)
            s.idleTimers[id] = IdleTimer(scheduled: scheduled, generation: generation, deadline: deadline)
        }
    }

    /// An exchange on connection `id` ended: back to the idle list at once when
    /// nobody waits (no action list), else through ``PoolStateMachine/connectionReleased(_:reusable:)``.
    func released(_ id: Int, reusable: Bool) {
        let parked = reusable && state.withLockedValue { s in
            guard let generation = s.machine.parkIdleNow(id) else { return false }
            armIdleTimer(id, generation: generation, in: &s)
            return true
        }
        if !parked { run { $0.machine.connectionReleased(id, reusable: reusable) } }
    }

    private func scheduleIdleCheck(_ id: Int, on eventLoop: any EventLoop, at deadline: NIODeadline) -> Scheduled<Void> {
        eventLoop.scheduleTask(deadline: deadline) { [weak self] in
            self?.idleTimerFired(id)
        }
    }

    /// Closes the connection if it is still idle since the deadline; re-arms if it was used meanwhile.
    private func idleTimerFired(_ id: Int) {
        run { s in
            guard let timer = s.idleTimers[id] else { return [] }
            guard let generation = timer.generation else {
                s.idleTimers[id] = nil  // in use: its next idle period schedules a new timer
                return []
            }
            if NIODeadline.now() < timer.deadline, let eventLoop = s.eventLoop(of: id) {
                s.idleTimers[id]?.scheduled = scheduleIdleCheck(id, on: eventLoop, at: timer.deadline)
                return []
            }
            s.idleTimers[id] = nil
            return s.machine.idleTimeoutFired(id, generation: generation)
        }
    }

    func error(for reason: PoolStateMachine<UpstreamKey>.Failure, key: UpstreamKey, connectError: (any Error)?) -> any Error {
        switch reason {
        case .poolExhausted:
            return GatewayError(
                .poolExhausted,
                "no upstream connection became free within \(configuration.maxWaitForConnection) (at most \(configuration.maxConnectionsPerKey) per upstream)",
                upstream: key.upstream
            )
        case .shuttingDown:
            return GatewayError(.shuttingDown, "the gateway is shutting down", upstream: key.upstream)
        case .connectionFailed:
            return connectError ?? GatewayError(.connectFailed, "could not connect to the upstream", upstream: key.upstream)
        case .cancelled:
            return CancellationError()
        }
    }

    func perform(_ effect: Effect) {
        switch effect {
        case .resume(let promise, let result):
            promise.completeWith(result)
        case .connect(let id, let key, let upstreamName, let dial):
            openConnection(id: id, key: key, upstreamName: upstreamName, dial: dial)
        case .close(let connection):
            connection.close()
        case .closeHTTP2(let connection):
            connection.close()
        case .cancelTimer(let timer):
            timer.cancel()
        case .completeShutdown(let continuations):
            for continuation in continuations { continuation.resume() }
        }
    }
}

extension UpstreamPool.State {
    /// The machine reported `shutdownCompleted`: the continuations of `shutdown()` to resume.
    mutating func completeShutdown() -> [UpstreamPool.Effect] {
        guard !shutdownComplete else { return [] }
        shutdownComplete = true
        defer { shutdownWaiters = [] }
        return [.completeShutdown(shutdownWaiters)]
    }

    /// An idle connection for `key` leased at once (its idle period ended), or nil: nothing queued.
    mutating func leaseIdleNow(_ key: UpstreamKey, affinity: Int?) -> Result<UpstreamPool.Lease, any Error>? {
        guard let id = machine.leaseIdleNow(key: key, affinity: affinity) else { return nil }
        endIdlePeriod(of: id)
        return lease(id, reused: true, key: key)
    }

    /// A free HTTP/2 stream for `key` leased at once, or nil (none free, or others wait): nothing queued.
    mutating func leaseStreamNow(_ key: UpstreamKey) -> Result<UpstreamPool.PoolLease, any Error>? {
        guard let leased = machine.leaseStreamNow(key: key) else { return nil }
        if leased.wasIdle { endIdlePeriod(of: leased.id) }
        return stream(leased.id, reused: true, key: key)
    }

    /// Connection `id` as a lease, or the error for a connection the pool does not know.
    func lease(_ id: Int, reused: Bool, key: UpstreamKey) -> Result<UpstreamPool.Lease, any Error> {
        guard let connection = connections[id] else {
            return .failure(GatewayError(.internalError, "pool handed out an unknown connection", upstream: key.upstream))
        }
        return .success(UpstreamPool.Lease(connection: connection, reused: reused))
    }

    /// A stream's slot on HTTP/2 connection `id`, or the error for a connection the pool does not know.
    func stream(_ id: Int, reused: Bool, key: UpstreamKey) -> Result<UpstreamPool.PoolLease, any Error> {
        guard let connection = http2Connections[id] else {
            return .failure(GatewayError(.internalError, "pool handed out an unknown HTTP/2 connection", upstream: key.upstream))
        }
        return .success(.stream(connection, reused: reused))
    }

    /// Where connection `id` (of either protocol) runs, if the pool holds it.
    func eventLoop(of id: Int) -> (any EventLoop)? {
        connections[id]?.eventLoop ?? http2Connections[id]?.eventLoop
    }

    /// Connection `id` was leased: its pending idle timer finds no idle period
    /// when it fires. Changed in place, through the index (one lookup).
    mutating func endIdlePeriod(of id: Int) {
        guard let t = idleTimers.index(forKey: id) else { return }
        idleTimers.values[t].generation = nil
    }
}
