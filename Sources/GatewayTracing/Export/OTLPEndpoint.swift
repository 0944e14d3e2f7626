import Foundation

/// Where spans are POSTed (`tracing.endpoint`, already checked by the config's
/// validation): `http://collector:4318/v1/traces` as its parts.
struct OTLPEndpoint: Sendable, Equatable {
    var tls: Bool
    var host: String
    var port: Int
    /// The request target: the path and query as written (`/v1/traces`).
    var target: String

    /// Nil when `url` is not an `http://` or `https://` URL with a host.
    init?(_ url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", var host = components.host, !host.isEmpty
        else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.tls = scheme == "https"
        self.host = host
        self.port = components.port ?? (tls ? 443 : 80)
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.target = path + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
    }

    /// The `Host` field: the host (an IPv6 address in brackets) and a port that is not the scheme's own.
    var authority: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return port == (tls ? 443 : 80) ? shownHost : "\(shownHost):\(port)"
    }

    /// Whether `host` is an IP address (no SNI is sent for one).
    var hostIsAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }
}
