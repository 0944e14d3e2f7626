import GatewayCore
import NIOHPACK
import NIOHTTP1

/// The translation between the gateway's messages (HTTP/1.1-shaped:
/// ``ProxyRequest``, ``UpstreamResponseHead``) and HTTP/2 field sections
/// (RFC 9113 §8.2, §8.3), in one place:
///
/// - Request: the pseudo-header fields first (`:method`; `:scheme`;
///   `:authority`, the request's authority, which is also what its `Host`
///   says; `:path`, the origin-form target), then its end-to-end fields in
///   their order, names lowercased. Not sent: `host` (`:authority` carries
///   it), the connection-specific fields (`connection` and the names it lists,
///   `keep-alive`, `proxy-connection`, `proxy-authorization`,
///   `proxy-authenticate`, `transfer-encoding`, `upgrade`, `trailer`), and the
///   client's `te` (hop-by-hop: the listener dropped it). Every request says
///   `te: trailers` instead (the one value HTTP/2 allows): the gateway takes
///   trailers from an HTTP/2 upstream and passes them to clients that asked for
///   them, and gRPC servers refuse a request without it. The client's
///   `content-length` is set from the
///   body as over HTTP/1.1. `cookie` goes as one field, as the client sent it.
///   `authorization` and `cookie` values are never indexed by HPACK (RFC 7541
///   §7.1.3): one connection carries the requests of many clients.
/// - Response and trailers: ``HTTP2ResponseSection``.
enum HTTP2Fields {
    /// `authority`: the request's ``ProxyRequest/authority`` (its connection keeps
    /// the last one made, the same for every stream of one origin).
    static func requestHeaders(_ request: ProxyRequest, authority: String? = nil) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(request.headers.count + 6)
        headers.add(name: ":method", value: request.method.rawValue)
        headers.add(name: ":scheme", value: request.scheme.rawValue)
        headers.add(name: ":authority", value: authority ?? request.authority)
        headers.add(name: ":path", value: request.target.isEmpty ? "/" : request.target)
        // One pass; a `Connection` field (the listener removed it already: rare here)
        // sends the fields again through a second one that also drops those it names.
        var sawContentLength = false
        var sawConnection = false
        for (name, value) in request.headers {
            switch skipped(name) {
            case .contentLength: sawContentLength = true; continue
            case .connection: sawConnection = true; continue
            case .other: continue
            case nil: break
            }
            let lowered = HTTPFieldBytes.lowercasedName(name)
            headers.add(name: lowered, value: value, indexing: isSensitive(lowered) ? .neverIndexed : .indexable)
        }
        if sawConnection {
            for name in request.headers.namesInConnection() { headers.remove(name: name) }
        }
        headers.add(name: "te", value: "trailers")
        if let length = contentLength(of: request, announced: sawContentLength) {
            headers.add(name: "content-length", value: String(length))
        }
        return headers
    }

    private enum Skipped { case contentLength, connection, other }

    /// Why a request field does not go on as it is (nil: it does): `host`
    /// (`:authority` says it), `content-length` (set from the body), a hop-by-hop one.
    private static func skipped(_ name: String) -> Skipped? {
        switch name.utf8.count {
        case 4 where HopByHopHeaders.equalsIgnoringCase(name, "host"): .other
        case 10 where HopByHopHeaders.equalsIgnoringCase(name, "connection"): .connection
        case 14 where HopByHopHeaders.equalsIgnoringCase(name, "content-length"): .contentLength
        default: HopByHopHeaders.isAlwaysHopByHop(name) ? .other : nil
        }
    }

    /// The `content-length` sent: the body's length when known, `0` for an
    /// empty body only when the client sent one or the method defines a
    /// meaning for content (RFC 9110 §8.6), nil when the body streams without one.
    /// `announced`: the request has a `content-length` field.
    static func contentLength(of request: ProxyRequest, announced: Bool) -> Int? {
        switch request.bodyLength {
        case .some(0):
            let announces = announced || request.method == .POST || request.method == .PUT || request.method == .PATCH
            return announces ? 0 : nil
        case .some(let length):
            return length
        case .none:
            return nil
        }
    }

    private static func isSensitive(_ loweredName: String) -> Bool {
        loweredName == "authorization" || loweredName == "cookie"
    }
}
