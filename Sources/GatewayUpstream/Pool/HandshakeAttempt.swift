import GatewayCore
import NIOCore

/// One attempt of a WebSocket handshake, on a connection of its own: opened on
/// the exchange's event loop (the tunnel its 101 makes splices two channels
/// of one loop), never taken from the pool nor given back to it. A WebSocket
/// lives for minutes or hours: in the pool it would hold one of the
/// `max_connections_per_host` slots the whole time, and a pooled connection
/// on another loop could not become its tunnel. Connect and TLS phases are
/// recorded as for any new connection; any answer but a 101 closes it.
final class HandshakeAttempt {
    private enum State {
        case connecting
        case started
        case done
    }

    private let pool: UpstreamPool
    private let request: ProxyRequest
    private let recorder: AttemptRecorder
    private let eventLoop: any EventLoop
    private let delegate: any UpstreamAttemptDelegate
    private var state = State.connecting

    private init(pool: UpstreamPool, request: ProxyRequest, recorder: AttemptRecorder, eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate) {
        self.pool = pool
        self.request = request
        self.recorder = recorder
        self.eventLoop = eventLoop
        self.delegate = delegate
    }

    static func start(
        pool: UpstreamPool, request: ProxyRequest, recorder: AttemptRecorder, eventLoop: any EventLoop,
        delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        let attempt = HandshakeAttempt(pool: pool, request: request, recorder: recorder, eventLoop: eventLoop, delegate: delegate)
        attempt.connect()
        let bound = NIOLoopBound(attempt, eventLoop: eventLoop)
        return UpstreamAttemptCancellation { bound.value.cancel() }
    }

    private func connect() {
        let key = UpstreamKey(request)
        let slot = "\(key.host):\(key.port)"
        let limit = pool.configuration.maxWebSocketsPerKey
        guard pool.webSockets.take(slot, limit: limit) else {
            state = .done
            let error = GatewayError(
                .poolExhausted, "\(limit) WebSocket connections to \(slot) are open (pool.max_websockets_per_host)", upstream: slot
            )
            recorder.failed(error)
            delegate.upstreamAttemptFailed(error)
            return
        }
        // Not pooled: the handler's releases concern nobody (it closes the connection after any answer but a 101).
        pool.connector.connect(id: 0, key: key, upstreamName: request.upstreamName, on: eventLoop, onRelease: { _ in })
            .hop(to: eventLoop)
            .assumeIsolated()
            .whenComplete { result in self.connected(result, key: key, slot: slot) }
    }

    private func connected(_ result: Result<UpstreamConnection, any Error>, key: UpstreamKey, slot: String) {
        let webSockets = pool.webSockets
        switch result {
        case .failure(let error):
            webSockets.give(slot)
            guard case .connecting = state else { return }
            state = .done
            recorder.failed(error)
            delegate.upstreamAttemptFailed(error)
        case .success(let connection):
            // The slot is given back when the connection closes: after any answer but a 101, or the tunnel's end.
            connection.closeFuture.whenComplete { _ in webSockets.give(slot) }
            guard case .connecting = state else { return connection.close() }
            state = .started
            let events = pool.events
            events.upstreamConnectionOpened(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http1Name)
            connection.closeFuture.whenComplete { _ in
                events.upstreamConnectionClosed(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http1Name)
            }
            UpstreamPool.record(UpstreamPool.Lease(connection: connection, reused: false), into: recorder)
            do {
                try connection.start(request, recorder: recorder, delegate: delegate)
            } catch {
                state = .done
                connection.close()
                recorder.failed(error)
                delegate.upstreamAttemptFailed(error)
            }
        }
    }

    /// Withdraws a connect in progress (the connection is closed when it comes);
    /// a started exchange ends through its writer.
    private func cancel() {
        if case .connecting = state { state = .done }
    }
}
