/// The host and port of an intercepted `CONNECT`: where every request read
/// inside the tunnel goes (over TLS), whatever its `Host` header says.
struct InterceptedOrigin: Sendable, Equatable {
    let host: String
    let port: Int
    /// `host:port`, as a client's authority names this origin: most requests'
    /// authority is this or `host`, byte for byte, and needs no parsing.
    private let hostAndPort: String

    init(host: String, port: Int) {
        self.host = host
        self.port = port
        self.hostAndPort = "\(host):\(port)"
    }

    /// A request target read inside the tunnel, as a target of the origin.
    func resolve(_ target: ClientTarget) -> ClientTarget {
        switch target {
        case .origin(let path):
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .absolute(_, _, _, let path):
            // Absolute form inside a tunnel: the tunnel decides where it goes.
            return .absolute(scheme: .https, host: host, port: port, target: path)
        case .authority:
            return target
        }
    }

    /// Whether a request's authority (HTTP/2 `:authority`, HTTP/1.1 `Host`)
    /// names another host, or another port, than the intercepted `CONNECT`:
    /// answered 421 `misdirected_request`, as a server answers a request it is
    /// not configured for (RFC 9110 §15.5.20). Without a port, the authority is
    /// read as this origin's; without an authority, the request is this origin's.
    func misdirects(_ authority: String?) -> Bool {
        guard let authority, !authority.isEmpty, authority != hostAndPort, authority != host else { return false }
        let (named, port) = Self.split(authority)
        // Compared by bytes, ignoring ASCII case: no string is made per request.
        let (a, b) = (Self.bare(named).utf8, Self.bare(host).utf8)
        guard a.count == b.count, zip(a, b).allSatisfy({ Self.lowered($0) == Self.lowered($1) }) else { return true }
        return port.map { $0 != self.port } ?? false
    }

    /// Host and port of `host[:port]` or `[v6][:port]`; a port that is not a number stays in the host.
    private static func split(_ authority: String) -> (host: Substring, port: Int?) {
        let text = authority[...]
        if text.first == "[", let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { return (text[...close], nil) }
            return (text[...close], Int(rest.dropFirst()))
        }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return (text, nil) }
        return (text[..<colon], port)
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// A host without IPv6 brackets or a trailing dot.
    private static func bare<S: StringProtocol>(_ host: S) -> Substring {
        var bare = Substring(host)
        if bare.first == "[", bare.last == "]" { bare = bare.dropFirst().dropLast() }
        if bare.last == "." { bare = bare.dropLast() }
        return bare
    }
}
