public import GatewayCore
public import NIOCore

/// The exchange's path: an attempt leased and started on the caller's event loop,
/// its response parts handed to a delegate there (no task, no continuation).
extension UpstreamPool: UpstreamTransport {
    public func startAttempt(
        _ request: ProxyRequest,
        record: ExchangeRecord,
        on eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        let index = record.beginAttempt(AttemptTimings(started: .now))
        return PooledAttempt.start(
            pool: self, request: request, recorder: AttemptRecorder(record: record, index: index),
            eventLoop: eventLoop, delegate: delegate
        )
    }
}

/// One attempt on the event loop: lease (again, if the leased connection turns
/// out closed before use, a few times at most), start, or fail to the delegate.
final class PooledAttempt {
    private enum State {
        /// Waiting for a connection (`waiterID` nil: served at once, within `lease()`).
        case leasing(waiterID: Int?)
        case started(UpstreamConnection)
        /// The pool granted an HTTP/2 stream (the key's mode changed while it leased).
        case multiplexed(MultiplexedAttempt)
        case done
    }

    private let pool: UpstreamPool
    private let request: ProxyRequest
    private let recorder: AttemptRecorder
    private let eventLoop: any EventLoop
    private let delegate: any UpstreamAttemptDelegate
    private var state = State.done
    private var staleLeases = 0

    init(
        pool: UpstreamPool, request: ProxyRequest, recorder: AttemptRecorder, eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate, staleLeases: Int = 0
    ) {
        self.pool = pool
        self.request = request
        self.recorder = recorder
        self.eventLoop = eventLoop
        self.delegate = delegate
        self.staleLeases = staleLeases
    }

    /// Starts one attempt. A warm pool's common case, an idle connection on
    /// this loop, starts at once with no attempt object and nothing left to
    /// cancel (issue 14: two allocations per request); any other case (no idle
    /// connection, one on another loop, one closed just before use) goes
    /// through a ``PooledAttempt``, which can wait and be withdrawn.
    ///
    /// A key that may speak HTTP/2 (`http2`, or `auto` over https) with no
    /// idle HTTP/1.1 connection (which only a key known to speak HTTP/1.1 has)
    /// goes to the HTTP/2 side, a ``MultiplexedAttempt``.
    static func start(
        pool: UpstreamPool, request: ProxyRequest, recorder: AttemptRecorder, eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        if request.isWebSocketHandshake {
            return HandshakeAttempt.start(pool: pool, request: request, recorder: recorder, eventLoop: eventLoop, delegate: delegate)
        }
        let key = UpstreamKey(request)
        let ready: Result<UpstreamPool.Lease, any Error>?
        switch key.httpVersion {
        case .http1:
            ready = pool.leaseIdleNow(key, on: eventLoop)
        case .http2:
            return MultiplexedAttempt.start(pool: pool, request: request, key: key, recorder: recorder, eventLoop: eventLoop, delegate: delegate)
        case .auto:
            switch pool.leaseIdleOrStreamNow(key, on: eventLoop) {
            case .idle(let idle):
                ready = idle
            case .stream(let now):
                return MultiplexedAttempt.start(
                    pool: pool, request: request, key: key, recorder: recorder, eventLoop: eventLoop, delegate: delegate, now: now
                )
            }
        }
        var staleLeases = 0
        if case .success(let lease)? = ready, lease.connection.eventLoop.inEventLoop {
            UpstreamPool.record(lease, into: recorder)
            do {
                try lease.connection.start(request, recorder: recorder, delegate: delegate)
                return .nothingToCancel
            } catch is ConnectionClosedBeforeUse {
                staleLeases = 1  // no byte of the request went: lease another, as an attempt
            } catch {
                recorder.failed(error)
                delegate.upstreamAttemptFailed(error)
                return .nothingToCancel
            }
        }
        let attempt = PooledAttempt(pool: pool, request: request, recorder: recorder, eventLoop: eventLoop, delegate: delegate, staleLeases: staleLeases)
        if let ready, staleLeases == 0 {
            attempt.state = .leasing(waiterID: nil)
            attempt.leased(ready)
        } else {
            attempt.lease()
        }
        let bound = NIOLoopBound(attempt, eventLoop: eventLoop)
        return UpstreamAttemptCancellation { bound.value.cancel() }
    }

    /// Starts on a connection a ``MultiplexedAttempt`` was granted (an `auto`
    /// key's connection that negotiated HTTP/1.1, or an idle one of a key that speaks it).
    func take(_ lease: UpstreamPool.Lease) {
        state = .leasing(waiterID: nil)
        leased(.success(lease))
    }

    func lease() {
        switch pool.leaseNow(UpstreamKey(request), upstreamName: request.upstreamName, on: eventLoop) {
        case .ready(let result):
            state = .leasing(waiterID: nil)
            leased(result)
        case .waiting(let waiterID, let future):
            state = .leasing(waiterID: waiterID)
            future.hop(to: eventLoop).assumeIsolated().whenComplete { result in
                switch result {
                case .success(.http1(let lease)): self.leased(.success(lease))
                case .success(.stream(let connection, let reused)): self.granted(stream: connection, reused: reused)
                case .failure(let error): self.leased(.failure(error))
                }
            }
        }
    }

    /// An HTTP/2 stream's slot: a ``MultiplexedAttempt`` opens the stream (or gives it back, if cancelled meanwhile).
    private func granted(stream connection: HTTP2Connection, reused: Bool) {
        guard case .leasing = state else { return connection.events.streamEnded() }
        let attempt = MultiplexedAttempt(pool: pool, request: request, key: UpstreamKey(request), recorder: recorder, eventLoop: eventLoop, delegate: delegate)
        state = .multiplexed(attempt)
        attempt.take(stream: connection, reused: reused)
    }

    private func leased(_ result: Result<UpstreamPool.Lease, any Error>) {
        guard case .leasing = state else {
            // Cancelled meanwhile: a connection that came anyway goes back unused.
            if case .success(let lease) = result {
                let handler = lease.connection.handler
                lease.connection.eventLoop.execute { handler.value.releaseUnused() }
            }
            return
        }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(let lease):
            UpstreamPool.record(lease, into: recorder)
            if lease.connection.eventLoop.inEventLoop {
                start(on: lease.connection, delegate: delegate)
            } else {
                // All of this loop's connections were busy: one from another loop.
                // Its handler calls the delegate there; the adapter hops each call.
                startAcrossLoops(on: lease.connection)
            }
        }
    }

    private func startAcrossLoops(on connection: UpstreamConnection) {
        state = .started(connection)
        let hopping = LoopHoppingDelegate(delegate: delegate, delegateLoop: eventLoop, connectionLoop: connection.eventLoop)
        let request = self.request
        let recorder = self.recorder
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        connection.eventLoop.execute {
            do {
                try connection.start(request, recorder: recorder, delegate: hopping)
            } catch {
                bound.eventLoop.execute { bound.value.startFailed(error) }
            }
        }
    }

    private func start(on connection: UpstreamConnection, delegate: any UpstreamAttemptDelegate) {
        state = .started(connection)
        do {
            try connection.start(request, recorder: recorder, delegate: delegate)
        } catch {
            startFailed(error)
        }
    }

    private func startFailed(_ error: any Error) {
        guard case .started = state else { return }
        if let stale = error as? ConnectionClosedBeforeUse {
            staleLeases += 1
            guard staleLeases < 3 else {
                return fail(GatewayError.upstreamClosed(upstream: stale.upstream, beforeHead: true))
            }
            lease()
        } else {
            fail(error)
        }
    }

    private func fail(_ error: any Error) {
        state = .done
        recorder.failed(error)
        delegate.upstreamAttemptFailed(error)
    }

    func cancel() {
        switch state {
        case .leasing(let waiterID):
            state = .done
            if let waiterID { pool.run { $0.machine.waiterCancelled(waiterID) } }
        case .multiplexed(let attempt):
            state = .done
            attempt.cancel()
        case .started, .done:
            state = .done
        }
    }
}
