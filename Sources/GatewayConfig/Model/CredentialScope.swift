public import GatewayCore

/// Where an upstream's credential may go: scheme, host and port (RFC 6454's
/// origin), never just the host.
///
/// - With `origin`, the credential goes to that origin only (the router sends
///   every request of the upstream there). An `http://` origin is the explicit
///   opt-in to a credential over plain HTTP.
/// - Without `origin`, only over TLS (`https://` absolute-form requests the
///   gateway originates TLS for, or requests inside an intercepted `CONNECT`),
///   to a host of the upstream, on one of `ports` (default 443).
///
/// A request outside the scope is forwarded without the credential (never
/// refused): the client's own headers pass as they are.
/// `TRACE` requests never get one (RFC 9110 §9.3.8: the upstream echoes them).
public struct CredentialScope: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// Exactly this origin.
        case origin(UpstreamOrigin)
        /// https to any of `hosts` on one of `ports`.
        case tls(hosts: [HostPattern], ports: [Int])
    }

    public var kind: Kind

    /// The ports of a TLS scope when the upstream lists none.
    public static let defaultPorts = [443]

    public init(_ kind: Kind) {
        self.kind = kind
    }

    /// The scope of `upstream`'s credential.
    public init(upstream: UpstreamConfig) {
        if let origin = upstream.origin {
            kind = .origin(origin)
        } else {
            kind = .tls(hosts: upstream.hosts, ports: upstream.ports ?? Self.defaultPorts)
        }
    }

    /// https to any host on 443: for credentials given without an upstream (tests).
    public static let anyHostOverTLS = CredentialScope(.tls(hosts: [HostPattern("*")!], ports: defaultPorts))

    /// Whether `request` (as the router made it: scheme, host and port are
    /// where it is sent) may carry the credential.
    public func permits(_ request: ProxyRequest) -> Bool {
        switch kind {
        case .origin(let origin):
            // The router sends an upstream's requests to its origin's host as
            // written in the config: the same string, most often, so compared first.
            return request.scheme == origin.scheme && request.port == origin.port
                && (request.host == origin.host || AccessConfig.normalize(request.host) == AccessConfig.normalize(origin.host))
        case .tls(let hosts, let ports):
            guard request.scheme == .https, ports.contains(request.port) else { return false }
            let host = AccessConfig.normalize(request.host)
            return hosts.contains { $0.matches(host) }
        }
    }
}

extension CredentialScope {
    /// Rules that hold whatever the upstream: a `TRACE` (or IIS's `TRACK`)
    /// never carries a credential (RFC 9110 §9.3.8: the upstream echoes the
    /// request), in any case: a lowercase `trace` is no method NIO knows
    /// (`.RAW("trace")`), but an origin that matches methods without regard
    /// to case echoes it all the same.
    public static func mayCarryCredential(_ request: ProxyRequest) -> Bool {
        switch request.method {
        case .TRACE: false
        case .RAW(let value): !isEchoMethod(value)
        default: true
        }
    }

    /// Whether `method` is `TRACE` or `TRACK`, in any case. By bytes: five of them, ASCII letters folded.
    static func isEchoMethod(_ method: String) -> Bool {
        let bytes = method.utf8
        guard bytes.count == 5 else { return false }
        // `| 0x20` lowercases an ASCII letter; only the letter's two cases fold to it.
        func isWord(_ word: String.UTF8View) -> Bool { zip(bytes, word).allSatisfy { $0 | 0x20 == $1 } }
        return isWord("trace".utf8) || isWord("track".utf8)
    }
}
