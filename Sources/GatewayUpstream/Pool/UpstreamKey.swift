public import GatewayCore

/// What makes two requests share a connection: scheme, host (lowercased), port,
/// TLS verification settings and HTTP version. Connections made under different
/// TLS settings or HTTP versions are never shared.
///
/// The pool looks a key up several times per request (lease, park, idle timer):
/// its hash is computed once, when it is made.
public struct UpstreamKey: Sendable, Hashable, CustomStringConvertible {
    public let scheme: UpstreamScheme
    public let host: String
    public let port: Int
    public let tls: UpstreamTLSSettings
    /// Over plain http `auto` is `http1`: only `http2` (prior-knowledge h2c)
    /// changes what a plain connection speaks.
    public let httpVersion: UpstreamHTTPVersion
    private let fieldsHash: Int

    public init(scheme: UpstreamScheme, host: String, port: Int, tls: UpstreamTLSSettings = .standard, httpVersion: UpstreamHTTPVersion = .auto) {
        self.scheme = scheme
        self.host = host.lowercasedHost
        self.port = port
        // TLS settings only matter for https; keep plain http keys equal whatever they say.
        self.tls = scheme == .https ? tls : .standard
        self.httpVersion = scheme == .http && httpVersion != .http2 ? .http1 : httpVersion
        var hasher = Hasher()
        hasher.combine(scheme)
        hasher.combine(self.host)
        hasher.combine(port)
        hasher.combine(self.tls)
        hasher.combine(self.httpVersion)
        fieldsHash = hasher.finalize()
    }

    public static func == (a: UpstreamKey, b: UpstreamKey) -> Bool {
        a.fieldsHash == b.fieldsHash && a.port == b.port && a.scheme == b.scheme && a.httpVersion == b.httpVersion
            && a.host == b.host && a.tls == b.tls
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fieldsHash)
    }

    public init(_ request: ProxyRequest) {
        self.init(scheme: request.scheme, host: request.host, port: request.port, tls: request.tls, httpVersion: request.upstreamHTTPVersion)
    }

    /// `host:port`, as reported in `GatewayError.upstream`.
    public var upstream: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(upstream)" }

    /// What a new connection for this key offers in ALPN when the pool may
    /// speak HTTP/2 on it (an HTTP/1.1-only connection offers `http/1.1`).
    var alpnOffer: UpstreamALPNOffer {
        switch httpVersion {
        case .auto: .http2AndHTTP1
        case .http1: .http1
        case .http2: .http2
        }
    }
}
