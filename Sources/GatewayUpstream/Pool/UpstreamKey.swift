public import GatewayCore

/// What makes two requests share a connection: scheme, host (lowercased), port
/// and TLS verification settings. Connections made under different TLS settings
/// are never shared.
///
/// The pool looks a key up several times per request (lease, park, idle timer):
/// its hash is computed once, when it is made.
public struct UpstreamKey: Sendable, Hashable, CustomStringConvertible {
    public let scheme: UpstreamScheme
    public let host: String
    public let port: Int
    public let tls: UpstreamTLSSettings
    private let fieldsHash: Int

    public init(scheme: UpstreamScheme, host: String, port: Int, tls: UpstreamTLSSettings = .standard) {
        self.scheme = scheme
        self.host = host.lowercasedHost
        self.port = port
        // TLS settings only matter for https; keep plain http keys equal whatever they say.
        self.tls = scheme == .https ? tls : .standard
        var hasher = Hasher()
        hasher.combine(scheme)
        hasher.combine(self.host)
        hasher.combine(port)
        hasher.combine(self.tls)
        fieldsHash = hasher.finalize()
    }

    public static func == (a: UpstreamKey, b: UpstreamKey) -> Bool {
        a.fieldsHash == b.fieldsHash && a.port == b.port && a.scheme == b.scheme && a.host == b.host && a.tls == b.tls
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(fieldsHash)
    }

    public init(_ request: ProxyRequest) {
        self.init(scheme: request.scheme, host: request.host, port: request.port, tls: request.tls)
    }

    /// `host:port`, as reported in `GatewayError.upstream`.
    public var upstream: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public var description: String { "\(scheme.rawValue)://\(upstream)" }
}
