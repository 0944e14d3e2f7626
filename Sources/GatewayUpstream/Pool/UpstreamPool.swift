public import GatewayCore
public import Logging
public import NIOCore
import NIOConcurrencyHelpers
import NIOPosix

/// The gateway's upstream client: keep-alive connections per scheme + host +
/// port + TLS settings + HTTP version, at most `maxConnectionsPerKey` each, FIFO
/// waiters beyond that, idle connections closed after `idleTimeout`, phase
/// timings recorded per attempt. An HTTP/1.1 connection carries one exchange
/// at a time; an HTTP/2 connection carries up to the server's limit of
/// concurrent streams (`PoolStateMachine+HTTP2.swift`).
///
/// Every pool decision, for both protocols, is made by one `PoolStateMachine`
/// under one lock; the actions it returns (open, hand over, close, timers) are
/// performed outside the lock.
public final class UpstreamPool: HTTPRequestSender, Sendable {
    struct Lease: Sendable {
        let connection: UpstreamConnection
        /// The request did not wait for this connection's connect.
        let reused: Bool
    }

    /// What a waiting request gets: a whole HTTP/1.1 connection, or a
    /// stream's slot on an HTTP/2 connection (which, for an `auto` key, only
    /// the connection's ALPN decides).
    enum PoolLease: Sendable {
        case http1(Lease)
        /// The request opens its stream there. `reused`: no connect or TLS phase to record.
        case stream(HTTP2Connection, reused: Bool)
    }

    struct Waiter {
        let promise: EventLoopPromise<PoolLease>
        let key: UpstreamKey
        let upstreamName: String?
    }

    /// A connection's idle timer, kept across exchanges: turning idle again only
    /// moves `deadline` (no timer cancelled and scheduled per request); a timer that
    /// fires early re-arms itself for the deadline.
    struct IdleTimer {
        var scheduled: Scheduled<Void>
        /// The idle period it watches; nil while the connection is in use.
        var generation: Int?
        var deadline: NIODeadline
    }

    struct State {
        var machine: PoolStateMachine<UpstreamKey>
        var nextWaiterID = 0
        var waiters: [Int: Waiter] = [:]
        var connections: [Int: UpstreamConnection] = [:]
        var http2Connections: [Int: HTTP2Connection] = [:]
        var waiterTimers: [Int: Scheduled<Void>] = [:]
        var idleTimers: [Int: IdleTimer] = [:]
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        var shutdownComplete = false
    }

    let configuration: UpstreamPoolConfiguration
    let eventLoopGroup: any EventLoopGroup
    let connector: UpstreamConnector
    /// WebSocket connections open per host and port (outside the pool's own connections).
    let webSockets = WebSocketSlots()
    let events: any GatewayEvents
    let logger: Logger
    let state: NIOLockedValueBox<State>

    public init(
        configuration: UpstreamPoolConfiguration,
        eventLoopGroup: any EventLoopGroup,
        tls: any UpstreamTLSHandlerFactory,
        events: any GatewayEvents = NoGatewayEvents(),
        deniedAddresses: DeniedAddresses = DeniedAddresses(),
        ownListeners: OwnListeners = OwnListeners(),
        logger: Logger
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        var connector = UpstreamConnector(configuration: configuration, eventLoopGroup: eventLoopGroup, tls: tls, deniedAddresses: deniedAddresses)
        connector.ownListeners = ownListeners
        self.connector = connector
        self.events = events
        self.logger = logger
        self.state = NIOLockedValueBox(State(machine: PoolStateMachine(maxConnectionsPerKey: configuration.maxConnectionsPerKey)))
    }

    /// Sends `request` to `scheme://host:port` with `target` on the request line and
    /// its headers as-is (adding `Host` when absent), streaming the body. Returns
    /// when the response head arrives; the body streams through a `BodySource`.
    ///
    /// Throws `GatewayError` with `upstream: "host:port"` (dnsFailure, connectFailed,
    /// connectTimeout, tlsHandshakeFailed, pinMismatch, certificateInvalid,
    /// connectionReset, requestTimeout, upstreamProtocolError, poolExhausted,
    /// shuttingDown), or `CancellationError` when the task was cancelled.
    ///
    /// Speaks HTTP/1.1 whatever the request's `upstreamHTTPVersion` (the OAuth2
    /// token endpoint's client: one request now and then).
    public func handle(_ request: ProxyRequest, context: RequestContext) async throws -> ProxyResponse {
        let index = context.record.beginAttempt(AttemptTimings(started: .now))
        let recorder = AttemptRecorder(record: context.record, index: index)
        let key = UpstreamKey(scheme: request.scheme, host: request.host, port: request.port, tls: request.tls, httpVersion: .http1)
        do {
            // An idle connection the upstream closed an instant before it was leased
            // carried no byte of this request: take another (a few times at most).
            var staleLeases = 0
            while true {
                let lease = try await acquire(key, upstreamName: request.upstreamName)
                Self.record(lease, into: recorder)
                do {
                    return try await lease.connection.execute(request, recorder: recorder)
                } catch let stale as ConnectionClosedBeforeUse {
                    staleLeases += 1
                    if staleLeases >= 3 { throw GatewayError.upstreamClosed(upstream: stale.upstream, beforeHead: true) }
                }
            }
        } catch {
            recorder.failed(error)
            throw error
        }
    }

    /// Connect and TLS phases for a new connection; none, and `reusedConnection`, for a reused one.
    static func record(_ lease: Lease, into recorder: AttemptRecorder) {
        record(lease.connection.timings, reused: lease.reused, wireVersion: .http1, into: recorder)
    }

    /// The phases of a connection (none when `reused`) and the protocol it speaks.
    static func record(_ timings: ConnectionTimings, reused: Bool, wireVersion: WireHTTPVersion, into recorder: AttemptRecorder) {
        recorder.update { attempt in
            attempt.reusedConnection = reused
            if reused {
                // Kept values set directly: nothing of the clock's read or converted.
                attempt.$connectStart = nil
                attempt.$connectEnd = nil
                attempt.$tlsStart = nil
                attempt.$tlsEnd = nil
            } else {
                attempt.connectStart = timings.connectStart
                attempt.connectEnd = timings.connectEnd
                attempt.tlsStart = timings.tlsStart
                attempt.tlsEnd = timings.tlsEnd
            }
            attempt.wireVersion = wireVersion
        }
    }

    /// Fails every waiter (and every later request) with `.shuttingDown`, closes
    /// every connection, and returns once they are closed.
    public func shutdown() async {
        let closed = state.withLockedValue { s in
            s.connections.values.map(\.closeFuture) + s.http2Connections.values.map(\.closeFuture)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let alreadyDone = state.withLockedValue { s -> Bool in
                if s.shutdownComplete { return true }
                s.shutdownWaiters.append(continuation)
                return false
            }
            if alreadyDone {
                continuation.resume()
            } else {
                run { $0.machine.shutdown() }
            }
        }
        for future in closed {
            try? await future.get()
        }
    }

    /// Established connections (HTTP/1.1 and HTTP/2), idle or in use.
    public var openConnectionCount: Int {
        state.withLockedValue { $0.machine.openConnectionCount }
    }

    /// Established HTTP/2 connections.
    public var http2ConnectionCount: Int {
        state.withLockedValue { $0.machine.http2ConnectionCount }
    }

    public var idleConnectionCount: Int {
        state.withLockedValue { $0.machine.idleConnectionCount }
    }

    /// Requests waiting for a connection (or an HTTP/2 stream).
    public var waitingRequestCount: Int {
        state.withLockedValue { $0.machine.waiterCount }
    }

    /// The pool's name for an event loop: a request prefers an idle connection on its own loop.
    static func affinity(of eventLoop: any EventLoop) -> Int {
        Int(bitPattern: UInt(bitPattern: ObjectIdentifier(eventLoop)))
    }

    /// Waits for a connection for `key`: an idle one, a new one, or one released by another request.
    func acquire(_ key: UpstreamKey, upstreamName: String?) async throws -> Lease {
        // The calling task runs on its client connection's event loop (see `EventLoopTaskExecutor`).
        let eventLoop = MultiThreadedEventLoopGroup.currentEventLoop ?? eventLoopGroup.next()
        let (waiterID, lease) = lease(key, upstreamName: upstreamName, on: eventLoop)
        let granted = try await withTaskCancellationHandler {
            try await lease.get()
        } onCancel: {
            self.run { $0.machine.waiterCancelled(waiterID) }
        }
        switch granted {
        case .http1(let lease):
            return lease
        case .stream(let connection, _):
            // Not for an HTTP/1.1 key (the only kind asked for here): give the slot back.
            connection.events.streamEnded()
            throw GatewayError(.internalError, "pool handed an HTTP/2 stream to an HTTP/1.1 request", upstream: key.upstream)
        }
    }

    /// What ``leaseNow(_:upstreamName:on:)`` got.
    enum LeaseOutcome {
        /// An idle connection, leased under the lock: no waiter, no promise.
        case ready(Result<Lease, any Error>)
        /// Queued as waiter `waiterID` (cancel with `waiterCancelled`).
        case waiting(waiterID: Int, EventLoopFuture<PoolLease>)
    }

    /// An idle connection for `key` at once if there is one (an exchange's
    /// common case: no waiter, promise, callback or action list), else ``lease(_:upstreamName:on:)``.
    func leaseNow(_ key: UpstreamKey, upstreamName: String?, on eventLoop: any EventLoop) -> LeaseOutcome {
        if let ready = leaseIdleNow(key, on: eventLoop) { return .ready(ready) }
        let (waiterID, future) = lease(key, upstreamName: upstreamName, on: eventLoop)
        return .waiting(waiterID: waiterID, future)
    }

    /// An idle connection for `key`, leased under the lock (preferring one on
    /// `eventLoop`), or nil when none is idle: then nothing is queued.
    func leaseIdleNow(_ key: UpstreamKey, on eventLoop: any EventLoop) -> Result<Lease, any Error>? {
        state.withLockedValue { $0.leaseIdleNow(key, affinity: Self.affinity(of: eventLoop)) }
    }

    /// What ``leaseIdleOrStreamNow(_:on:)`` found for an `auto` key.
    enum LeaseNow {
        /// An idle HTTP/1.1 connection.
        case idle(Result<Lease, any Error>)
        /// No idle connection; the HTTP/2 side's answer.
        case stream(StreamNow)
    }

    /// A free HTTP/2 stream leased, or none free (or others wait): nothing queued.
    enum StreamNow {
        case leased(Result<PoolLease, any Error>)
        case notFree
    }

    /// An `auto` key's ``leaseIdleNow(_:on:)`` and, when no connection is
    /// idle, ``leaseStreamNow(_:)``, under one lock: its origin may speak either.
    func leaseIdleOrStreamNow(_ key: UpstreamKey, on eventLoop: any EventLoop) -> LeaseNow {
        state.withLockedValue { s in
            if let idle = s.leaseIdleNow(key, affinity: Self.affinity(of: eventLoop)) { return .idle(idle) }
            return .stream(s.leaseStreamNow(key).map(StreamNow.leased) ?? .notFree)
        }
    }

    /// A free stream of an HTTP/2 connection for `key`, leased under the lock,
    /// or nil when none is free or others wait: then nothing is queued. No
    /// promise, waiter or callback per request.
    func leaseStreamNow(_ key: UpstreamKey) -> Result<PoolLease, any Error>? {
        state.withLockedValue { $0.leaseStreamNow(key) }
    }

    /// A connection or a stream for `key`, preferring a connection on
    /// `eventLoop`: when an idle one (or a free stream) is there, the future is
    /// already complete (no hop, no suspension). The waiter id withdraws the
    /// request (`machine.waiterCancelled`).
    func lease(_ key: UpstreamKey, upstreamName: String?, on eventLoop: any EventLoop) -> (Int, EventLoopFuture<PoolLease>) {
        let promise = eventLoop.makePromise(of: PoolLease.self)
        var waiterID = 0
        run { s in
            s.nextWaiterID += 1
            waiterID = s.nextWaiterID
            s.waiters[waiterID] = Waiter(promise: promise, key: key, upstreamName: upstreamName)
            return s.machine.request(waiterID, key: key, affinity: Self.affinity(of: eventLoop))
        }
        return (waiterID, promise.futureResult)
    }
}
