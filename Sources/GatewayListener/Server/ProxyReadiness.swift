package import GatewayCore
package import NIOCore
package import NIOHTTP1

/// The proxy port's own readiness answer. `GET /readyz` in origin form is what
/// a probe sends, never a proxied request (those are absolute-form or
/// `CONNECT`): the proxy answers it itself with 200, before proxy
/// authentication and access rules, as HAProxy's `monitor-uri` does. It
/// says only that the port accepts and answers; nothing is forwarded, logged
/// as an exchange or counted.
///
/// The admin port's `/readyz`, and so the image's HEALTHCHECK, asks it
/// (``ProxyReadinessProbe``): readiness fails when the proxy port stops
/// accepting or answering, even while the admin port is up.
package enum ProxyReadiness {
    package static let path = "/readyz"

    /// A readiness probe: `GET` or `HEAD` of ``path`` in origin form, without a body,
    /// outside an intercepted tunnel.
    static func isProbe(_ target: ClientTarget, method: HTTPMethod, bodyless: Bool, insideInterception: Bool) -> Bool {
        guard case .origin(let path) = target, path == Self.path, bodyless, !insideInterception else { return false }
        return method == .GET || method == .HEAD
    }

    static var response: ProxyResponse {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Cache-Control", value: "no-store")
        return ProxyResponse(status: .ok, headers: headers, body: .bytes(Self.body))
    }

    private static let body = ByteBuffer(string: "{\"status\":\"ready\"}\n")
}
