import NIOCore
public import NIOHTTP1

/// The scheme the gateway speaks to an upstream.
public enum UpstreamScheme: String, Sendable, Hashable, Codable {
    case http
    case https

    public var defaultPort: Int { self == .http ? 80 : 443 }
}

/// A request on its way from a client to an upstream.
///
/// `headers` hold end-to-end headers only (but a WebSocket handshake's upgrade
/// fields): the listener has already removed hop-by-hop headers (and those
/// named in `Connection`) and added `Via`. They are the client's bytes with
/// the gateway's edits (``RequestFields``).
/// `target` is origin-form (`/path?query`), as sent on the upstream request line.
public struct ProxyRequest: Sendable {
    public var method: HTTPMethod
    public var scheme: UpstreamScheme
    public var host: String
    public var port: Int
    public var target: String
    public var version: HTTPVersion
    public var headers: RequestFields
    public var body: ProxyBody
    /// The configured upstream the request belongs to (nil: an unconfigured, allowed host).
    public var upstreamName: String?
    /// How to verify the upstream's certificate when `scheme` is https.
    public var tls: UpstreamTLSSettings
    /// `scheme://authority` as the client asked for it, before an upstream's
    /// `origin` rewrote it (`https://` inside an intercepted `CONNECT`); nil when
    /// unchanged. Traces replay through the gateway with it. Made when read
    /// from ``rewrittenFrom`` (a string per request cost an allocation).
    public var clientOrigin: String? {
        get { rewrittenFrom?.origin ?? clientOriginText }
        set {
            clientOriginText = newValue
            rewrittenFrom = nil
        }
    }
    /// Whether an upstream's `origin` rewrote the request (``clientOrigin`` is
    /// not nil), asked without making the string.
    public var hasClientOrigin: Bool { rewrittenFrom != nil || clientOriginText != nil }
    /// The scheme, host and port the client asked for, when an upstream's
    /// `origin` rewrote them (the router's): ``clientOrigin`` in parts.
    public var rewrittenFrom: ClientEndpoint?
    /// A ``clientOrigin`` given as a string.
    @usableFromInline var clientOriginText: String?
    /// A WebSocket opening handshake (RFC 6455 §4): `headers` keep its
    /// `Connection: Upgrade` and `Upgrade: websocket` (the only hop-by-hop
    /// fields they hold: set by the listener for the next hop), the upstream
    /// head carries them, and a `101` turns the exchange into a tunnel.
    public var isWebSocketHandshake = false
    /// Which HTTP version to speak upstream (the upstream's `http_version`).
    /// The pool keys connections by it: see ``UpstreamHTTPVersion``.
    public var upstreamHTTPVersion = UpstreamHTTPVersion.auto

    /// Inlinable: the router's request is made in place, not made and then copied out.
    @inlinable
    public init(
        method: HTTPMethod,
        scheme: UpstreamScheme,
        host: String,
        port: Int,
        target: String,
        version: HTTPVersion = .http1_1,
        headers: RequestFields,
        body: ProxyBody = .empty,
        upstreamName: String? = nil,
        tls: UpstreamTLSSettings = .standard,
        rewrittenFrom: ClientEndpoint? = nil,
        upstreamHTTPVersion: UpstreamHTTPVersion = .auto
    ) {
        self.method = method
        self.scheme = scheme
        self.host = host
        self.port = port
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
        self.upstreamName = upstreamName
        self.tls = tls
        self.rewrittenFrom = rewrittenFrom
        self.upstreamHTTPVersion = upstreamHTTPVersion
    }

    /// `host` or `host:port` when the port is not the scheme's default, as for a `Host` header.
    public var authority: String { Self.authority(scheme: scheme, host: host, port: port) }

    /// ``authority`` of a request not made yet.
    public static func authority(scheme: UpstreamScheme, host: String, port: Int) -> String {
        let h = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        guard port != scheme.defaultPort else { return h }
        // Appended, not interpolated: interpolation reserves a buffer first,
        // where `127.0.0.1:8080` fits in a small string and allocates nothing.
        var authority = h
        authority.append(":")
        authority.append(String(port))
        return authority
    }

    /// `host:port`, the port always written (`[::1]:443`): how error bodies and
    /// logs name the upstream a request went to.
    public var hostPort: String {
        host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// The absolute URL of the request, e.g. `http://example.com:8081/path?q=1`.
    public var url: String { "\(scheme.rawValue)://\(authority)\(target)" }

    /// `scheme://authority` the client used (``clientOrigin``, else the request's own).
    public var clientURLPrefix: String { clientOrigin ?? "\(scheme.rawValue)://\(authority)" }

    /// `host[:port]` as the client asked for it (for an upstream with `origin`,
    /// not the origin the gateway rewrote it to).
    public var clientAuthority: String {
        if let rewrittenFrom { return rewrittenFrom.authority }
        // A byte scan for `://`: Foundation's `range(of:)` bridges to NSString (two allocations).
        guard let clientOrigin else { return authority }
        let bytes = clientOrigin.utf8
        var index = bytes.startIndex
        while let colon = bytes[index...].firstIndex(of: UInt8(ascii: ":")) {
            let rest = bytes[bytes.index(after: colon)...]
            if rest.starts(with: "//".utf8) {
                return String(clientOrigin[bytes.index(colon, offsetBy: 3)...])
            }
            index = bytes.index(after: colon)
        }
        return authority
    }

    /// The path without the query string.
    public var path: Substring {
        if let q = target.firstIndex(of: "?") { return target[..<q] }
        return target[...]
    }

    /// Whether the method is idempotent per RFC 9110 §9.2.2.
    public var isIdempotent: Bool {
        switch method {
        case .GET, .HEAD, .OPTIONS, .PUT, .DELETE, .TRACE: return true
        default: return false
        }
    }

    /// No request body goes upstream.
    public var bodyLengthIsZero: Bool {
        if case .empty = body.storage { return true }
        return body.declaredLength == 0
    }
}

/// A scheme, host and port as a client asked for them (``ProxyRequest/rewrittenFrom``).
public struct ClientEndpoint: Sendable, Equatable {
    public var scheme: UpstreamScheme
    public var host: String
    public var port: Int

    public init(scheme: UpstreamScheme, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// `host[:port]`, as ``ProxyRequest/authority`` writes it.
    public var authority: String { ProxyRequest.authority(scheme: scheme, host: host, port: port) }

    /// `scheme://authority`.
    public var origin: String { "\(scheme.rawValue)://\(authority)" }
}
