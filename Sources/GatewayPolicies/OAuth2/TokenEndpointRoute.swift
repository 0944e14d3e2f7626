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
        guard let components = URLComponents(string: tokenURL),
            let schemeText = components.scheme?.lowercased(),
            let scheme = UpstreamScheme(rawValue: schemeText),
            var host = components.host, !host.isEmpty,
            components.user == nil, components.password == nil
        else { return nil }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        self.init(scheme: scheme, host: host, port: components.port ?? scheme.defaultPort, target: target)
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
