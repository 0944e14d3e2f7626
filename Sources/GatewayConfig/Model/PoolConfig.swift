/// `pool`: the upstream connection pool.
public struct PoolConfig: Sendable, Equatable {
    /// Open connections per upstream key (scheme, host, port, TLS settings); at least 1.
    public var maxConnectionsPerHost: Int
    /// An idle pooled connection is closed after this.
    public var idleTimeout: Duration
    /// TCP connect (and TLS handshake) must complete within this.
    public var connectTimeout: Duration
    /// From the request sent to the response head, and the longest gap
    /// between two response body chunks.
    public var requestTimeout: Duration
    /// Open WebSocket connections per upstream host and port (each a connection
    /// of its own, outside the pool); beyond, a handshake is refused (503).
    public var maxWebSocketsPerHost: Int

    public init(
        maxConnectionsPerHost: Int = 64,
        idleTimeout: Duration = .seconds(60),
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(60),
        maxWebSocketsPerHost: Int = 256
    ) {
        self.maxWebSocketsPerHost = maxWebSocketsPerHost
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.idleTimeout = idleTimeout
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
    }
}
