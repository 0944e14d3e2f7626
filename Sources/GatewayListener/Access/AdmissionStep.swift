package import GatewayConfig
package import GatewayCore
import NIOHTTP1

/// A first step of every request, before it is routed (proxy authentication,
/// the access rules). Built once per config load, in the order GatewayApp's
/// `ExchangePhases` sets (``ActiveConfig/admission``), and run in that order by
/// the client connection's handler; each answers synchronously.
package protocol AdmissionStep: Sendable {
    func admit(_ request: AdmissionRequest) -> Admission
}

/// What the admission steps see of a request.
package struct AdmissionRequest {
    let head: ClientRequestHead
    /// Where the request goes (inside an intercepted tunnel, already resolved to its origin).
    let target: ClientTarget
    /// Inside an intercepted `CONNECT` (whose own request was admitted already).
    let insideInterception: Bool
    /// The request has no body (so the connection may carry another after a refusal).
    let bodyless: Bool
}

/// What an admission step decided.
package enum Admission {
    case proceed
    /// Refused with a gateway error; the connection closes after the answer.
    case refuse(GatewayError)
    /// Answered (a 407 challenge); `keepAlive` when the connection may carry another request.
    case answer(ProxyResponse, keepAlive: Bool)
}

/// `proxy_auth`: `Proxy-Authorization: Basic` against the configured users.
package struct ProxyAuthStep: AdmissionStep {
    let authenticator: ProxyAuthenticator

    package init(config: ProxyAuthConfig) {
        authenticator = ProxyAuthenticator(config: config)
    }

    package func admit(_ request: AdmissionRequest) -> Admission {
        guard !request.insideInterception, !authenticator.isAuthorized(request.head.headers) else { return .proceed }
        // A bodyless request may be followed by another on this connection; a
        // CONNECT, an upgrade or a request with a body may not.
        return .answer(authenticator.challenge(), keepAlive: request.bodyless && !request.head.isUpgradeLike)
    }
}

/// `access`: the host must be allowed (and not denied), and a `CONNECT` must go
/// to one of `connect_ports`. Origin-form targets pass (they are refused later).
/// The rules are indexed when the step is built (``AccessIndex``), once per config load.
package struct AccessStep: AdmissionStep {
    let access: AccessConfig
    let rules: AccessIndex

    package init(access: AccessConfig) {
        self.access = access
        self.rules = AccessIndex(access)
    }

    package func admit(_ request: AdmissionRequest) -> Admission {
        switch request.target {
        case .origin:
            return .proceed
        case .authority(let host, let port):
            // A CONNECT inside an intercepted tunnel is refused as unsupported later.
            guard !request.insideInterception else { return .proceed }
            guard access.connectPorts.contains(port) else {
                let allowed = access.connectPorts.map(String.init).joined(separator: ", ")
                return .refuse(GatewayError(.portNotAllowed, "CONNECT to port \(port) is not allowed (allowed: \(allowed))", upstream: "\(host):\(port)"))
            }
            return allowed(host, port: port)
        case .absolute(_, let host, let port, _):
            return allowed(host, port: port)
        }
    }

    /// The `host:port` named in a refusal is made only for one.
    private func allowed(_ host: String, port: Int) -> Admission {
        guard rules.isAllowed(host: host) else {
            return .refuse(GatewayError(.hostNotAllowed, "the gateway's access rules do not allow \(host)", upstream: "\(host):\(port)"))
        }
        return .proceed
    }
}
