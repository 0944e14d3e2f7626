/// Events the layers report for metrics, without depending on a metrics backend.
/// Observability implements it with Prometheus; tests use a recorder; the
/// default does nothing. Implementations must be cheap and never block.
public protocol GatewayEvents: Sendable {
    /// A pinned upstream presented no key matching its pins.
    func pinFailure(host: String, upstream: String?, mode: PinMode)
    /// A client connection was closed at once: `reason` is the limit that was
    /// reached (`max_client_connections`, `max_connections_per_client`).
    func clientConnectionRefused(reason: String)
    /// An upstream connection was opened (after connect and TLS) or closed.
    func upstreamConnectionOpened(host: String, port: Int)
    func upstreamConnectionClosed(host: String, port: Int)
    /// The same, with the protocol the connection speaks (`httpVersion`:
    /// `HTTP/1.1` or `HTTP/2`, ``UpstreamHTTPVersion/http1Name``): the pool
    /// reports these. By default they report the two above.
    func upstreamConnectionOpened(host: String, port: Int, httpVersion: String)
    func upstreamConnectionClosed(host: String, port: Int, httpVersion: String)
    /// A request to `upstream` is about to be sent again. `reason` is a bounded
    /// label: an error code (`connect_failed`, `connection_reset`, `request_timeout`, ...)
    /// or `status_NNN` for a configured status.
    func retry(upstream: String, reason: String)
    /// A request was rate limited. `source` is `local` (the gateway answered 429
    /// itself) or `upstream` (the upstream answered 429, or 503 with `Retry-After`).
    func rateLimited(upstream: String, source: String)
    /// Requests of `upstream` now waiting in the gateway (token bucket queue or a
    /// hold until the upstream's rate-limit reset): a gauge.
    func queueDepth(upstream: String, depth: Int)
    /// A token refresh for `upstream` finished. `trigger` is a bounded label
    /// (`expiry`: proactive, before the token expires; `401`: after a 401 from the upstream;
    /// `first_use`: the first request needing a token), `result` is `success` or `failure`.
    func tokenRefresh(upstream: String, trigger: String, result: String)
    /// A leaf certificate for an intercepted CONNECT was minted (`cached`: false)
    /// or taken from the cache.
    func interceptionLeaf(upstream: String, cached: Bool)
    /// A client's TLS handshake with the gateway (interception) failed. `reason` is
    /// a bounded label: `untrusted_ca` (the client refused the gateway's CA),
    /// `closed` (it hung up during the handshake) or `protocol`.
    func interceptionHandshakeFailure(upstream: String, reason: String)
}

extension GatewayEvents {
    public func pinFailure(host: String, upstream: String?, mode: PinMode) {}
    public func clientConnectionRefused(reason: String) {}
    public func upstreamConnectionOpened(host: String, port: Int) {}
    public func upstreamConnectionClosed(host: String, port: Int) {}
    public func upstreamConnectionOpened(host: String, port: Int, httpVersion: String) {
        upstreamConnectionOpened(host: host, port: port)
    }
    public func upstreamConnectionClosed(host: String, port: Int, httpVersion: String) {
        upstreamConnectionClosed(host: host, port: port)
    }
    public func retry(upstream: String, reason: String) {}
    public func rateLimited(upstream: String, source: String) {}
    public func queueDepth(upstream: String, depth: Int) {}
    public func tokenRefresh(upstream: String, trigger: String, result: String) {}
    public func interceptionLeaf(upstream: String, cached: Bool) {}
    public func interceptionHandshakeFailure(upstream: String, reason: String) {}
}

/// Discards every event.
public struct NoGatewayEvents: GatewayEvents {
    public init() {}
}
