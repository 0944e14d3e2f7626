/// `limits`: protections of the client-facing listener.
public struct ListenerLimits: Sendable, Equatable {
    /// Largest request head (request line + headers) accepted; larger gets 431.
    /// Between 1 KiB and 1 MiB.
    public var maxHeadBytes: Int
    /// Once a request head starts arriving, all of it must arrive within this
    /// (defends against slowloris).
    public var headerTimeout: Duration
    /// An idle keep-alive client connection is closed after this.
    public var idleTimeout: Duration
    /// On graceful shutdown, in-flight requests get this long to finish.
    public var drainTimeout: Duration
    /// While a request body arrives, the longest pause between two reads; then 408.
    public var bodyTimeout: Duration
    /// How long a client may leave its response unread (socket not writable); then the connection closes.
    public var sendTimeout: Duration
    /// Response bytes held for one client that reads slowly, at most: the
    /// client connection's write buffer takes half (it stops being writable
    /// there), one read from the upstream the other half; the upstream is read
    /// no faster than the client drains. Between 16 KiB and 16 MiB.
    public var responseBuffer: Int
    /// Open client connections at most; beyond, new ones are closed at once (counted).
    public var maxClientConnections: Int
    /// Open connections from one client address at most (a share of
    /// ``maxClientConnections`` no single client may take); beyond, closed at once (counted).
    public var maxConnectionsPerClient: Int
    /// A `CONNECT` tunnel or a WebSocket with no byte either way for this long is closed.
    public var tunnelIdleTimeout: Duration

    public static let minHeadBytes = 1024
    public static let maxHeadBytesLimit = 1024 * 1024
    public static let responseBufferRange = (16 * 1024)...(16 * 1024 * 1024)

    public init(
        maxHeadBytes: Int = 32 * 1024,
        headerTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        drainTimeout: Duration = .seconds(30),
        bodyTimeout: Duration = .seconds(60),
        sendTimeout: Duration = .seconds(60),
        responseBuffer: Int = 256 * 1024,
        maxClientConnections: Int = 10_000,
        maxConnectionsPerClient: Int = 1_000,
        tunnelIdleTimeout: Duration = .seconds(600)
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.drainTimeout = drainTimeout
        self.bodyTimeout = bodyTimeout
        self.sendTimeout = sendTimeout
        self.responseBuffer = responseBuffer
        self.maxClientConnections = maxClientConnections
        self.maxConnectionsPerClient = maxConnectionsPerClient
        self.tunnelIdleTimeout = tunnelIdleTimeout
    }
}
