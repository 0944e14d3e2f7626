import GatewayCore
import Logging
import NIOCore

/// Connections of the HTTP/2 side: opened offering the key's ALPN, reported to
/// `HTTP2PoolStateMachine` as HTTP/2 (with the server's stream limit), as
/// HTTP/1.1 (then adopted by the HTTP/1 side), or as failed; their streams'
/// ends, GOAWAYs and settings changes reported as they come.
extension UpstreamPool {
    func openHTTP2Connection(id: Int, key: UpstreamKey, upstreamName: String?) {
        logger.debug("opening upstream connection", metadata: ["upstream": "\(key)", "connection": "\(id)", "alpn": "\(key.alpnOffer.protocols)"])
        let events = HTTP2ConnectionEvents(
            maxStreamsChanged: { [weak self] maxStreams in
                self?.runHTTP2 { $0.http2.machine.maxStreamsChanged(id, maxStreams: maxStreams) }
            },
            goingAway: { [weak self] in
                self?.runHTTP2 { $0.http2.machine.goAwayReceived(id) }
            },
            streamEnded: { [weak self] in
                self?.runHTTP2 { $0.http2.machine.streamClosed(id) }
            }
        )
        connector.connectNegotiating(id: id, key: key, upstreamName: upstreamName, http2Events: events) { [weak self] reusable in
            self?.released(id, reusable: reusable)
        }
        .whenComplete { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { connection.close() }
                return
            }
            switch result {
            case .success(.http2(let connection, let maxStreams)):
                self.http2Established(connection, maxStreams: maxStreams)
            case .success(.http1(let connection)):
                self.negotiatedHTTP1(connection)
            case .failure(let error):
                self.logger.debug(
                    "upstream connection failed",
                    metadata: ["upstream": "\(key)", "connection": "\(id)", "error": "\(error)"]
                )
                self.runHTTP2(connectError: error) { $0.http2.machine.connectionFailed(id) }
            }
        }
    }

    private func http2Established(_ connection: HTTP2Connection, maxStreams: Int) {
        let key = connection.key
        let id = connection.id
        events.upstreamConnectionOpened(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http2Name)
        logger.debug(
            "upstream connection opened",
            metadata: ["upstream": "\(key)", "connection": "\(id)", "protocol": "h2", "max_streams": "\(maxStreams)"]
        )
        runHTTP2 { s in
            s.http2.connections[id] = connection
            return s.http2.machine.connectionEstablished(id, maxStreams: maxStreams, affinity: Self.affinity(of: connection.eventLoop))
        }
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.events.upstreamConnectionClosed(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http2Name)
            self.logger.debug("upstream connection closed", metadata: ["upstream": "\(key)", "connection": "\(id)"])
            self.runHTTP2 { s in
                s.http2.connections[id] = nil
                return s.http2.machine.connectionClosed(id)
            }
        }
    }

    /// The first connection of an `auto` key speaks HTTP/1.1: the HTTP/1 side adopts it (``resolveHTTP2``).
    private func negotiatedHTTP1(_ connection: UpstreamConnection) {
        let key = connection.key
        events.upstreamConnectionOpened(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http1Name)
        logger.debug("upstream connection opened", metadata: ["upstream": "\(key)", "connection": "\(connection.id)", "protocol": "http/1.1"])
        connection.closeFuture.whenComplete { [weak self] _ in
            self?.events.upstreamConnectionClosed(host: key.host, port: key.port, httpVersion: UpstreamHTTPVersion.http1Name)
        }
        runHTTP2 { s in
            s.http2.negotiatedHTTP1[connection.id] = connection
            return s.http2.machine.connectionNegotiatedHTTP1(connection.id)
        }
    }

    /// An adopted connection's close, reported to the HTTP/1 side as any of its own.
    func watchAdopted(_ connection: UpstreamConnection) {
        let id = connection.id
        connection.closeFuture.whenComplete { [weak self] _ in
            guard let self else { return }
            self.logger.debug("upstream connection closed", metadata: ["upstream": "\(connection.key)", "connection": "\(id)"])
            self.run { s in
                s.connections[id] = nil
                return s.machine.connectionClosed(id)
            }
        }
    }
}
