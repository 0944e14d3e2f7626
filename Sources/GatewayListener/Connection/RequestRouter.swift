import GatewayConfig
import GatewayCore
import NIOHTTP1

/// Turns a validated client request into the request the gateway sends upstream:
/// picks the configured upstream, applies its origin (TLS origination), sets
/// `Host` from the target (RFC 9112 §3.2.2: a proxy ignores the client's own),
/// drops hop-by-hop headers and `Expect` (the gateway answers 100-continue
/// itself), and adds `Via`.
struct RequestRouter {
    /// Read in place (a `GatewayConfig` copy per request costs a retain and a release per field).
    let active: ActiveConfig
    static let viaPseudonym = "gateway"
    /// The `Via` value the gateway adds to the responses it forwards (always HTTP/1.1 upstream).
    static let responseVia = "1.1 \(viaPseudonym)"

    func route(
        head: HTTPRequestHead,
        scheme: UpstreamScheme,
        host: String,
        port: Int,
        target: String,
        declaredLength: Int?
    ) -> ProxyRequest {
        var scheme = scheme
        var host = host
        var port = port
        var clientOrigin: String?
        let index = active.config.upstreamIndex(forHost: host)
        if let index, let origin = active.config.upstreams[index].origin {
            // A byte test: `contains(":")` resolves to Foundation's, which bridges to NSString.
            let clientHost = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
            clientOrigin = "\(scheme.rawValue)://\(port == scheme.defaultPort ? clientHost : "\(clientHost):\(port)")"
            scheme = origin.scheme
            host = origin.host
            port = origin.port
        }
        var request = ProxyRequest(
            method: head.method,
            scheme: scheme,
            host: host,
            port: port,
            target: target,
            version: .http1_1,
            headers: [:],
            body: .passedThrough(declaredLength: declaredLength),
            upstreamName: index.map { active.config.upstreams[$0].name },
            tls: index.map { active.config.upstreams[$0].tls } ?? .standard
        )
        request.clientOrigin = clientOrigin
        var headers = head.headers
        HopByHopHeaders.removeAll(from: &headers)
        if headers.contains(name: "expect") { headers.remove(name: "expect") }  // `remove` copies even when it finds nothing
        request.headers = Self.settingHost(request.authority, in: headers)
        HopByHopHeaders.addVia(to: &request.headers, version: head.version, pseudonym: Self.viaPseudonym)
        return request
    }

    /// `Host` first if the client sent none, else replaced in place; duplicates dropped.
    static func settingHost(_ authority: String, in headers: HTTPHeaders) -> HTTPHeaders {
        var result = HTTPHeaders()
        result.reserveCapacity(headers.count + 2)  // and `Via`, added next
        var placed = false
        if !headers.contains(name: "host") {
            result.add(name: "Host", value: authority)
            placed = true
        }
        for (name, value) in headers {
            if HopByHopHeaders.equalsIgnoringCase(name, "host") {
                if !placed {
                    result.add(name: name, value: authority)
                    placed = true
                }
                continue
            }
            result.add(name: name, value: value)
        }
        return result
    }
}
