import GatewayCore
import Logging
import NIOCore

/// The pool's connections: opened as the machine's `createConnection` says
/// (HTTP/1.1 only, or offering the key's ALPN), reported to the machine as what
/// they negotiated (the hand-over is the machine's), and, for HTTP/2, their
/// streams' ends, GOAWAYs and settings changes as they come.
extension UpstreamPool {
    func openConnection(id: Int, key: UpstreamKey, upstreamName: String?, dial: PoolStateMachine<UpstreamKey>.Dial) {
        let onRelease: @Sendable (Bool) -> Void = { [weak self] reusable in self?.released(id, reusable: reusable) }
        let opened: EventLoopFuture<NegotiatedConnection>
        switch dial {
        case .http1:
            logger.debug("opening upstream connection", metadata: ["upstream": "\(key)", "connection": "\(id)"])
            opened = connector.connect(id: id, key: key, upstreamName: upstreamName, onRelease: onRelease).map(NegotiatedConnection.http1)
        case .negotiate:
            logger.debug("opening upstream connection", metadata: ["upstream": "\(key)", "connection": "\(id)", "alpn": "\(key.alpnOffer.protocols)"])
            opened = connector.connectNegotiating(id: id, key: key, upstreamName: upstreamName, http2Events: http2Events(of: id), onRelease: onRelease)
        }
        opened.whenComplete { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            switch result {
            case .success(let connection):
                self.established(connection, id: id, key: key, dial: dial)
            case .failure(let error):
                self.logger.debug("upstream connection failed", metadata: ["upstream": "\(key)", "connection": "\(id)", "error": "\(error)"])
                self.run(connectError: error) { $0.machine.connectionFailed(id) }
            }
        }
    }

    /// What an HTTP/2 connection reports, as the machine's events.
    private func http2Events(of id: Int) -> HTTP2ConnectionEvents {
        HTTP2ConnectionEvents(
            maxStreamsChanged: { [weak self] maxStreams in
                self?.run { $0.machine.maxStreamsChanged(id, maxStreams: maxStreams) }
            },
            goingAway: { [weak self] in
                self?.run { $0.machine.goAwayReceived(id) }
            },
            streamEnded: { [weak self] in
                self?.run { $0.machine.streamClosed(id) }
            }
        )
    }

    /// A new connection joins the pool as what it speaks; its close is reported as any connection's.
    private func established(_ opened: NegotiatedConnection, id: Int, key: UpstreamKey, dial: PoolStateMachine<UpstreamKey>.Dial) {
        let eventLoop: any EventLoop
        let closeFuture: EventLoopFuture<Void>
        let negotiated: PoolStateMachine<UpstreamKey>.Negotiated
        var metadata: Logger.Metadata = ["upstream": "\(key)", "connection": "\(id)"]
        switch opened {
        case .http1(let connection):
            eventLoop = connection.eventLoop
            closeFuture = connection.closeFuture
            negotiated = .http1
            if dial == .negotiate { metadata["protocol"] = "http/1.1" }
        case .http2(let connection, let maxStreams):
            eventLoop = connection.eventLoop
            closeFuture = connection.closeFuture
            negotiated = .http2(maxStreams: maxStreams)
            metadata["protocol"] = "h2"
            metadata["max_streams"] = "\(maxStreams)"
        }
        let httpVersion = negotiated == .http1 ? UpstreamHTTPVersion.http1Name : UpstreamHTTPVersion.http2Name
        events.upstreamConnectionOpened(host: key.host, port: key.port, httpVersion: httpVersion)
        logger.debug("upstream connection opened", metadata: metadata)
        run { s in
            switch opened {
            case .http1(let connection): s.connections[id] = connection
            case .http2(let connection, _): s.http2Connections[id] = connection
            }
            return s.machine.connectionEstablished(id, as: negotiated, affinity: Self.affinity(of: eventLoop))
        }
        closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.events.upstreamConnectionClosed(host: key.host, port: key.port, httpVersion: httpVersion)
            self.logger.debug("upstream connection closed", metadata: ["upstream": "\(key)", "connection": "\(id)"])
            self.run { s in
                s.connections[id] = nil
                s.http2Connections[id] = nil
                return s.machine.connectionClosed(id)
            }
        }
    }
}
