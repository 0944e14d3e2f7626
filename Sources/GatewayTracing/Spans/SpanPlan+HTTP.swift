import GatewayCore
import GatewayObservability
import NIOHTTP1

/// The HTTP semantic conventions' names for what a request says.
extension SpanPlan {
    /// `GET /users/{id}`: the method (`HTTP` for one the conventions do not
    /// know) and the endpoint template, the low-cardinality name both spans take.
    static func name(method: HTTPMethod, route: String) -> String {
        let method = knownMethod(method) ?? "HTTP"
        var name = ""
        name.reserveCapacity(method.utf8.count + 1 + route.utf8.count)
        name += method
        name += " "
        name += route
        return name
    }

    /// The conventions' methods by name; nil for any other (an extension method).
    static func knownMethod(_ method: HTTPMethod) -> String? {
        let label = EndpointKey.methodLabel(method)
        return label == "OTHER" ? nil : label
    }

    /// `http.request.method`, and `http.request.method_original` for `_OTHER`.
    static func addMethod<Sink: SpanAttributeSink>(_ method: HTTPMethod, to sink: inout Sink) {
        if let known = knownMethod(method) {
            sink.attribute("http.request.method", .string(known))
        } else {
            sink.attribute("http.request.method", .string("_OTHER"))
            sink.attribute("http.request.method_original", .string(method.rawValue))
        }
    }

    /// The request as the client made it (before an upstream's `origin`
    /// rewrote it): `url.scheme`, `server.address`, `server.port`, `url.path`,
    /// `url.query` (the redacted target's parts), said to `sink`.
    /// Without `clientOrigin` the client asked for the request's own scheme,
    /// host and port (what its `authority` would split back into).
    static func addClientSide<Sink: SpanAttributeSink>(of request: ProxyRequest, redactedTarget target: String, to sink: inout Sink) {
        if let prefix = request.clientOrigin {
            var scheme = request.scheme.rawValue
            if let colon = prefix.firstIndex(of: ":"), prefix[colon...].hasPrefix("://") { scheme = String(prefix[..<colon]) }
            sink.attribute("url.scheme", .string(scheme))
            let (host, port) = split(authority: request.clientAuthority)
            sink.attribute("server.address", .string(host))
            sink.attribute("server.port", .int64(Int64(port ?? (scheme == "https" ? 443 : 80))))
        } else {
            sink.attribute("url.scheme", .string(request.scheme.rawValue))
            sink.attribute("server.address", .string(request.host))
            sink.attribute("server.port", .int64(Int64(request.port)))
        }
        let bytes = target.utf8
        // By bytes when ASCII (nearly always); else by characters, as a `?` with a combining mark is not one.
        let mark = bytes.contains { $0 >= 0x80 } ? target.firstIndex(of: "?") : bytes.firstIndex(of: UInt8(ascii: "?"))
        if let mark {
            // Written from the target's pieces: a query of over 15 bytes made a string of its own.
            sink.attribute("url.path", target[..<mark])
            sink.attribute("url.query", target[target.index(after: mark)...])
        } else {
            sink.attribute("url.path", .string(target))
        }
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
    static func host(ofEndpoint endpoint: String) -> Substring? {
        // By byte: a search by `Character` pays for grapheme breaking.
        let bytes = endpoint.utf8
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")), colon != bytes.startIndex else { return nil }
        return endpoint[..<colon]
    }

    /// `network.protocol.version`: `1.1`, `1.0`, `2`.
    static func protocolVersion(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): return "1.1"
        case (1, 0): return "1.0"
        case (2, 0): return "2"
        default: break
        }
        return version.minor == 0 && version.major >= 2 ? "\(version.major)" : "\(version.major).\(version.minor)"
    }
}
