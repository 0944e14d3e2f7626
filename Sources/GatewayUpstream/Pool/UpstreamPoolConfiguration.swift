/// Limits and timeouts of the upstream pool.
public struct UpstreamPoolConfiguration: Sendable, Hashable {
    /// At most this many connections per key (in use + connecting + idle).
    public var maxConnectionsPerKey: Int
    /// Idle pooled connections are closed after this.
    public var idleTimeout: Duration
    /// DNS + TCP connect + TLS handshake of a new connection.
    public var connectTimeout: Duration
    /// From the request fully sent to the response head, and the longest gap
    /// between response body chunks (or request body writes) while the gateway waits on the upstream.
    public var requestTimeout: Duration
    /// A request waiting for a free slot while its key is at `maxConnectionsPerKey`
    /// fails with `.poolExhausted` after this.
    public var maxWaitForConnection: Duration
    /// Not used by the pool (the listener adds `Via`); kept for configuration symmetry.
    public var viaPseudonym: String?
    /// Open WebSocket connections per host and port (``WebSocketSlots``).
    public var maxWebSocketsPerKey = 256
    /// The most one read of a connection takes from its socket (half of
    /// `limits.response_buffer`, at most 128 KiB): what a slow client's
    /// exchange may hold beyond its connection's write buffer.
    public var maxBytesPerRead = 128 * 1024

    public init(
        maxConnectionsPerKey: Int = 64,
        idleTimeout: Duration = .seconds(60),
        connectTimeout: Duration = .seconds(5),
        requestTimeout: Duration = .seconds(60),
        maxWaitForConnection: Duration? = nil,
        viaPseudonym: String? = nil
    ) {
        precondition(maxConnectionsPerKey > 0, "maxConnectionsPerKey must be positive")
        self.maxConnectionsPerKey = maxConnectionsPerKey
        self.idleTimeout = idleTimeout
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maxWaitForConnection = maxWaitForConnection ?? connectTimeout
        self.viaPseudonym = viaPseudonym
    }
}
