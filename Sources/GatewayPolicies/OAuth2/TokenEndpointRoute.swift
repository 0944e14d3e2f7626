import Foundation
public import GatewayConfig
public import GatewayCore

/// Where a token endpoint call goes: `token_url` parsed, then treated like any
/// request to that host: when the host belongs to a configured upstream, that
/// upstream's `origin` and `tls` (CA file, pins) apply.
public struct TokenEndpointRoute: Sendable, Equatable {
    public var scheme: UpstreamScheme
    public var host: String
    public var port: Int
    /// Origin-form request target: path and query of `token_url`.
    public var target: String
    public var tls: UpstreamTLSSettings
    /// The configured upstream the token host belongs to, if any (for metrics and pool keys).
    public var upstreamName: String?

    public init(scheme: UpstreamScheme, host: String, port: Int, target: String, tls: UpstreamTLSSettings = .standard, upstreamName: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
        self.tls = tls
        self.upstreamName = upstreamName
    }

    /// Parses `tokenURL` and applies the matching upstream of `config`, if any.
    /// Nil when the URL is not an absolute http(s) URL with a host.
    public init?(tokenURL: String, config: GatewayConfig) {
        // The same parse as config validation: a URL the config accepts is routable.
        guard let (origin, target) = OAuth2Config.tokenEndpoint(of: tokenURL) else { return nil }
        let host = origin.host
        self.init(scheme: origin.scheme, host: host, port: origin.port, target: target)
        if let upstream = config.upstream(forHost: host) {
            upstreamName = upstream.name
            tls = upstream.tls
            if let origin = upstream.origin {
                self.scheme = origin.scheme
                self.host = origin.host
                self.port = origin.port
            }
        }
    }

    /// `host` or `host:port`, as for the `Host` header.
    public var authority: String {
        let h = host.contains(":") ? "[\(host)]" : host
        return port == scheme.defaultPort ? h : "\(h):\(port)"
    }

    /// `https://auth.example.com/oauth/token` (without the query), for logs.
    public var displayURL: String {
        let path = target.firstIndex(of: "?").map { String(target[..<$0]) } ?? target
        return "\(scheme.rawValue)://\(authority)\(path)"
    }
}
