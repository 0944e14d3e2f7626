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

    public static let minHeadBytes = 1024
    public static let maxHeadBytesLimit = 1024 * 1024

    public init(
        maxHeadBytes: Int = 32 * 1024,
        headerTimeout: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(60),
        drainTimeout: Duration = .seconds(30)
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.drainTimeout = drainTimeout
    }
}
