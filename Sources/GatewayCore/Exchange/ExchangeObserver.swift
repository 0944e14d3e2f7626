public import NIOCore

/// Sees each client exchange from its routed request to its end, synchronously
/// on the client connection's event loop: metrics and traces. It never changes
/// the exchange and never waits.
public protocol ExchangeObserver: Sendable {
    /// The request as routed (before credentials are added); returns what is
    /// told of the rest of the exchange.
    func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation
}

/// One exchange as an ``ExchangeObserver`` follows it. Called on one event loop
/// (the client connection's), `finish` exactly once.
public protocol ExchangeObservation: AnyObject {
    /// A chunk of the request body on its way upstream.
    func requestBodyPart(_ buffer: ByteBuffer)
    /// The response head as written to the client: its status, its fields
    /// (an upstream's as it sent them, kept as bytes until read), and the `Via`
    /// the gateway adds after them. Not called for an error answer written
    /// after ``finish(_:)``. An observation that keeps the fields beyond the
    /// call keeps ``ResponseFields/detached()``, not a slice of the read buffer.
    func responseHead(status: Int, fields: ResponseFields, via: String?)
    /// The exchange ended. `status` is what the client got (nil when it got no
    /// response head), `error` why the exchange failed (nil when it did not, or
    /// when the client went away: `cancelled`).
    func finish(_ outcome: ExchangeOutcome)
    /// The exchange ended in `101 Switching Protocols` (a WebSocket) and the
    /// tunnel it became opened (after ``finish(_:)``, whose status was 101);
    /// ``tunnelClosed(_:)`` follows once it closes.
    func tunnelOpened()
    /// The tunnel closed: the bytes each way and how long it was open.
    func tunnelClosed(_ summary: TunnelSummary)
}

extension ExchangeObservation {
    /// Observers that do not look at response heads (metrics) need not implement it.
    public func responseHead(status: Int, fields: ResponseFields, via: String?) {}
    public func tunnelOpened() {}
    public func tunnelClosed(_ summary: TunnelSummary) {}
}

/// A tunnel an exchange became (a WebSocket after its 101), as it closed.
public struct TunnelSummary: Sendable, Equatable {
    /// Bytes the client sent through it (to the upstream).
    public var bytesFromClient: Int
    /// Bytes the upstream sent through it (to the client).
    public var bytesFromUpstream: Int
    public var duration: Duration

    public init(bytesFromClient: Int, bytesFromUpstream: Int, duration: Duration) {
        self.bytesFromClient = bytesFromClient
        self.bytesFromUpstream = bytesFromUpstream
        self.duration = duration
    }
}

/// How an exchange ended, for metrics and traces.
public struct ExchangeOutcome: Sendable {
    public var status: Int?
    public var responseBytes: Int
    public var error: GatewayError.Code?
    public var cancelled: Bool

    public init(status: Int?, responseBytes: Int, error: GatewayError.Code?, cancelled: Bool = false) {
        self.status = status
        self.responseBytes = responseBytes
        self.error = error
        self.cancelled = cancelled
    }
}

/// What runs for the requests of one upstream (or of unconfigured hosts),
/// built once per config load: the observers around the exchange, then the
/// retry planner and the synchronous attempt steps (rate limit, OAuth2 token,
/// credential) before the transport. A class: each exchange keeps its route
/// with one retain, not a copy of every field.
public final class UpstreamRoute: Sendable {
    public let observers: [any ExchangeObserver]
    public let steps: [any AttemptStep]
    public let retry: (any RetryPlanner)?
    /// The upstream's transport when mocks, replay or faults toward the
    /// policies stand in front of the pool (they wrap it); nil: the pool.
    public let transport: (any UpstreamTransport)?
    /// Faults, mocks or replay may act on its exchanges: their log lines read
    /// the record's ``ExchangeRecord/injectedResponse`` (other routes never do).
    public let injects: Bool

    public init(
        observers: [any ExchangeObserver], steps: [any AttemptStep] = [], retry: (any RetryPlanner)? = nil,
        transport: (any UpstreamTransport)? = nil, injects: Bool = false
    ) {
        self.observers = observers
        self.steps = steps
        self.retry = retry
        self.transport = transport
        self.injects = injects
    }
}

/// The routes of one config snapshot, by upstream name.
public struct RouteTable: Sendable {
    public let byUpstream: [String: UpstreamRoute]
    /// For allowed hosts no upstream names.
    public let unconfigured: UpstreamRoute

    public init(byUpstream: [String: UpstreamRoute], unconfigured: UpstreamRoute) {
        self.byUpstream = byUpstream
        self.unconfigured = unconfigured
    }

    public func route(forUpstream name: String?) -> UpstreamRoute {
        guard let name, let route = byUpstream[name] else { return unconfigured }
        return route
    }
}
