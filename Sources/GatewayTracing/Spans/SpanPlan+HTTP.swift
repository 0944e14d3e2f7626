import GatewayCore
import GatewayObservability
import NIOHTTP1

/// The HTTP semantic conventions' names for what a request says.
extension SpanPlan {
    /// `GET /users/{id}`: the method (`HTTP` for one the conventions do not
    /// know) and the endpoint template, the low-cardinality name both spans take.
    static func name(method: HTTPMethod, route: String) -> String {
        "\(knownMethod(method) ?? "HTTP") \(route)"
    }

    /// The conventions' methods by name; nil for any other (an extension method).
    static func knownMethod(_ method: HTTPMethod) -> String? {
        let label = EndpointKey.methodLabel(method)
        return label == "OTHER" ? nil : label
    }

    /// `http.request.method`, and `http.request.method_original` for `_OTHER`.
    static func methodAttributes(_ method: HTTPMethod) -> SpanAttributes {
        var attributes: SpanAttributes = [:]
        if let known = knownMethod(method) {
            attributes.set("http.request.method", value: .string(known))
        } else {
            attributes.set("http.request.method", value: .string("_OTHER"))
            attributes.set("http.request.method_original", value: .string(method.rawValue))
        }
        return attributes
    }

    /// The request as the client made it (before an upstream's `origin`
    /// rewrote it): `url.scheme`, `server.address`, `server.port`, `url.path`,
    /// `url.query` (the redacted target's parts).
    static func clientSide(of request: ProxyRequest, redactedTarget target: String) -> SpanAttributes {
        var attributes: SpanAttributes = [:]
        let prefix = request.clientURLPrefix
        var scheme = request.scheme.rawValue
        if let colon = prefix.firstIndex(of: ":"), prefix[colon...].hasPrefix("://") { scheme = String(prefix[..<colon]) }
        attributes.set("url.scheme", value: .string(scheme))
        let (host, port) = split(authority: request.clientAuthority)
        attributes.set("server.address", value: .string(host))
        attributes.set("server.port", value: .int64(Int64(port ?? (scheme == "https" ? 443 : 80))))
        if let mark = target.firstIndex(of: "?") {
            attributes.set("url.path", value: .string(String(target[..<mark])))
            attributes.set("url.query", value: .string(String(target[target.index(after: mark)...])))
        } else {
            attributes.set("url.path", value: .string(target))
        }
        return attributes
    }

    /// `host[:port]` (IPv6 in brackets) as its host and port.
    static func split(authority: String) -> (host: String, port: Int?) {
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            let host = String(authority[authority.index(after: authority.startIndex)..<close])
            let rest = authority[authority.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        guard let colon = authority.lastIndex(of: ":") else { return (authority, nil) }
        return (String(authority[..<colon]), Int(authority[authority.index(after: colon)...]))
    }

    /// The address of `ip:port` (the port always written, an IPv6 address
    /// without brackets), or nil for `unknown`.
    static func host(ofEndpoint endpoint: String) -> String? {
        guard let colon = endpoint.lastIndex(of: ":"), colon != endpoint.startIndex else { return nil }
        return String(endpoint[..<colon])
    }

    /// `network.protocol.version`: `1.1`, `1.0`, `2`.
    static func protocolVersion(_ version: HTTPVersion) -> String {
        version.minor == 0 && version.major >= 2 ? "\(version.major)" : "\(version.major).\(version.minor)"
    }
}
