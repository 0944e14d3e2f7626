import GatewayCore
import NIOCore

/// One attempt of a key that may speak HTTP/2 (`http2`, or `auto` with no
/// idle HTTP/1.1 connection), on the caller's event loop. It leases from the
/// pool, which grants a stream's slot or, when the key speaks HTTP/1.1 (its
/// connection negotiated it), a whole connection: then the attempt becomes a
/// ``PooledAttempt`` on it. A stream is opened on the connection's loop (with
/// a ``LoopHoppingDelegate`` when that is another loop), and the stream's
/// handler runs the exchange. A stream that could not be opened carried no
/// byte of the request: another is leased (a few times at most).
final class MultiplexedAttempt {
    private enum State {
        /// Waiting for a stream's slot or a connection.
        case leasing(waiterID: Int)
        /// The stream is being opened on the connection.
        case opening
        /// The stream, for cancelling; it runs the exchange.
        case open(HTTP2StreamCancellation)
        case http1(PooledAttempt)
        case done
    }

    private let pool: UpstreamPool
    private let request: ProxyRequest
    private let key: UpstreamKey
    private let recorder: AttemptRecorder
    private let eventLoop: any EventLoop
    private let delegate: any UpstreamAttemptDelegate
    private var state = State.done
    private var staleLeases = 0

    init(
        pool: UpstreamPool, request: ProxyRequest, key: UpstreamKey, recorder: AttemptRecorder, eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate
    ) {
        self.pool = pool
        self.request = request
        self.key = key
        self.recorder = recorder
        self.eventLoop = eventLoop
        self.delegate = delegate
    }

    /// `now`: what the caller leased already under the pool's lock (a free
    /// stream, or `.notFree`: none was, so the attempt queues at once).
    static func start(
        pool: UpstreamPool, request: ProxyRequest, key: UpstreamKey, recorder: AttemptRecorder, eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate, now: UpstreamPool.StreamNow? = nil
    ) -> UpstreamAttemptCancellation {
        let attempt = MultiplexedAttempt(pool: pool, request: request, key: key, recorder: recorder, eventLoop: eventLoop, delegate: delegate)
        switch now {
        case .leased(let free):
            attempt.state = .leasing(waiterID: 0)
            attempt.leased(free)
        case .notFree:
            attempt.queue()
        case nil:
            attempt.lease()
        }
        let bound = NIOLoopBound(attempt, eventLoop: eventLoop)
        return UpstreamAttemptCancellation { bound.value.cancel() }
    }

    private func lease() {
        if let free = pool.leaseStreamNow(key) {
            state = .leasing(waiterID: 0)
            return leased(free)
        }
        queue()
    }

    /// Waits in the pool's queue for a stream or a connection.
    private func queue() {
        let (waiterID, future) = pool.lease(key, upstreamName: request.upstreamName, on: eventLoop)
        state = .leasing(waiterID: waiterID)
        future.assumeIsolated().whenComplete { result in
            self.leased(result)
        }
    }

    /// Opens its stream on a slot a ``PooledAttempt`` was granted.
    func take(stream connection: HTTP2Connection, reused: Bool) {
        state = .leasing(waiterID: 0)
        leased(.success(.stream(connection, reused: reused)))
    }

    private func leased(_ result: Result<UpstreamPool.PoolLease, any Error>) {
        guard case .leasing = state else { return giveBack(result) }
        switch result {
        case .failure(let error):
            fail(error)
        case .success(.http1(let lease)):
            let attempt = PooledAttempt(pool: pool, request: request, recorder: recorder, eventLoop: eventLoop, delegate: delegate)
            state = .http1(attempt)
            attempt.take(lease)
        case .success(.stream(let connection, let reused)):
            UpstreamPool.record(connection.timings, reused: reused, wireVersion: .http2, into: recorder)
            open(on: connection)
        }
    }

    /// Opens the stream on the connection's loop; the stream's handler calls the
    /// delegate there (through a ``LoopHoppingDelegate`` when that is not this loop).
    private func open(on connection: HTTP2Connection) {
        state = .opening
        if connection.eventLoop.inEventLoop {
            let stream = connection.openStream(request, recorder: recorder, delegate: delegate) { error in
                self.notOpened(error)
            }
            if let stream { opened(HTTP2StreamCancellation(stream: NIOLoopBound(stream, eventLoop: connection.eventLoop))) }
            return
        }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        let hopping = LoopHoppingDelegate(delegate: delegate, delegateLoop: eventLoop, connectionLoop: connection.eventLoop)
        let request = self.request
        let recorder = self.recorder
        connection.eventLoop.execute {
            let stream = connection.openStream(request, recorder: recorder, delegate: hopping) { error in
                bound.eventLoop.execute { bound.value.notOpened(error) }
            }
            if let stream {
                let cancellation = HTTP2StreamCancellation(stream: NIOLoopBound(stream, eventLoop: connection.eventLoop))
                bound.eventLoop.execute { bound.value.opened(cancellation) }
            }
        }
    }

    private func opened(_ stream: HTTP2StreamCancellation) {
        switch state {
        case .opening:
            state = .open(stream)
        case .done:
            stream.cancel()  // cancelled meanwhile: the stream is reset
        case .leasing, .open, .http1:
            break  // it did not open after all, and another lease is under way
        }
    }

    /// The stream could not be opened (the connection closed meanwhile): nothing was sent.
    private func notOpened(_ error: any Error) {
        switch state {
        case .opening, .open:
            staleLeases += 1
            guard staleLeases < 3 else {
                return fail(GatewayError.upstreamClosed(upstream: key.upstream, beforeHead: true))
            }
            lease()
        case .leasing, .http1, .done:
            break
        }
    }

    /// A lease that came after the attempt was cancelled goes back unused.
    private func giveBack(_ result: Result<UpstreamPool.PoolLease, any Error>) {
        switch result {
        case .success(.stream(let connection, _)):
            connection.events.streamEnded()
        case .success(.http1(let lease)):
            let handler = lease.connection.handler
            lease.connection.eventLoop.execute { handler.value.releaseUnused() }
        case .failure:
            break
        }
    }

    private func fail(_ error: any Error) {
        state = .done
        recorder.failed(error)
        delegate.upstreamAttemptFailed(error)
    }

    /// Withdraws a waiting lease, or resets the stream (its exchange fails; the
    /// delegate, which cancelled, has let go of it).
    func cancel() {
        let current = state
        state = .done
        switch current {
        case .leasing(let waiterID):
            pool.run { $0.machine.waiterCancelled(waiterID) }
        case .open(let stream):
            stream.cancel()
        case .http1(let attempt):
            attempt.cancel()
        case .opening, .done:
            break
        }
    }
}
