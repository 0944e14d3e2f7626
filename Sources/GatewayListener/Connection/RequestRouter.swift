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
        let index = active.upstreamHosts.upstreamIndex(forHost: host)
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
        if let index { request.upstreamHTTPVersion = active.config.upstreams[index].httpVersion }
        request.headers = Self.endToEndHeaders(of: head.headers, authority: request.authority)
        HopByHopHeaders.addVia(to: &request.headers, version: head.version, pseudonym: Self.viaPseudonym)
        return request
    }

    /// The client's fields as they go upstream, built in one copy: hop-by-hop
    /// fields and those `Connection` names dropped (``HopByHopHeaders``),
    /// `Expect` dropped, `Host` set to `authority` (first if the client sent
    /// none, else in the place of the first; duplicates dropped), the rest in
    /// their order. Room is left for `Via` and a credential.
    static func endToEndHeaders(of headers: HTTPHeaders, authority: String) -> HTTPHeaders {
        // Names `Connection` lists (rare: most say `keep-alive` or `close`), and whether a Host is there.
        var named: [Substring] = []
        var hasHost = false
        for (name, value) in headers {
            switch name.utf8.count {
            case 4:
                if HopByHopHeaders.equalsIgnoringCase(name, "host") { hasHost = true }
            case 10:
                guard HopByHopHeaders.equalsIgnoringCase(name, "connection") else { continue }
                HopByHopHeaders.appendFieldsNamed(inConnection: value, to: &named)
            default:
                continue
            }
        }
        var result = HTTPHeaders()
        result.reserveCapacity(headers.count + 2)
        var placed = false
        if !hasHost {
            result.add(name: "Host", value: authority)
            placed = true
        }
        for (name, value) in headers {
            if HopByHopHeaders.isAlwaysHopByHop(name) { continue }
            if name.utf8.count == 6, HopByHopHeaders.equalsIgnoringCase(name, "expect") { continue }
            // Before the names `Connection` lists: a `Connection: host` does not take Host away.
            if name.utf8.count == 4, HopByHopHeaders.equalsIgnoringCase(name, "host") {
                if !placed {
                    result.add(name: name, value: authority)
                    placed = true
                }
                continue
            }
            if !named.isEmpty, named.contains(where: { HopByHopHeaders.equalsIgnoringCase(name, $0) }) { continue }
            result.add(name: name, value: value)
        }
        return result
    }
}
