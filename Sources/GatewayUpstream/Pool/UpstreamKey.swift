public import GatewayCore

/// What makes two requests share a connection: scheme, host (lowercased), port
/// and TLS verification settings. Connections made under different TLS settings
/// are never shared.
public struct UpstreamKey: Sendable, Hashable, CustomStringConvertible {
    public let scheme: UpstreamScheme
    public let host: String
    public let port: Int
    public let tls: UpstreamTLSSettings

    public init(scheme: UpstreamScheme, host: String, port: Int, tls: UpstreamTLSSettings = .standard) {
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        // TLS settings only matter for https; keep plain http keys equal whatever they say.
        self.tls = scheme == .https ? tls : .standard
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
