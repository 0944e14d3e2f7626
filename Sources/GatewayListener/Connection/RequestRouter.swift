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
    /// The `Via` value the gateway adds to the responses it forwards (`1.1`
    /// whether the upstream spoke HTTP/1.1 or HTTP/2: one constant, no string
    /// made per response), and to an HTTP/1.1 client's requests.
    static let responseVia = "1.1 \(viaPseudonym)"
    /// The `Via` of an HTTP/2 client's requests (RFC 9110 §7.6.3: the version it spoke).
    static let http2RequestVia = "2.0 \(viaPseudonym)"

    func route(
        head: ClientRequestHead,
        scheme: UpstreamScheme,
        host: String,
        port: Int,
        target: String,
        declaredLength: Int?
    ) -> ProxyRequest {
        var scheme = scheme
        var host = host
        var port = port
        var rewrittenFrom: ClientEndpoint?
        let index = active.upstreamHosts.upstreamIndex(forHost: host)
        if let index, let origin = active.config.upstreams[index].origin {
            // Kept as parts: the request's `clientOrigin` string is made only where it is read.
            rewrittenFrom = ClientEndpoint(scheme: scheme, host: host, port: port)
            scheme = origin.scheme
            host = origin.host
            port = origin.port
        }
        // The fields first, then the request made with them: a request changed
        // after it was made (its fields from its own `authority`) was copied.
        var headers = Self.endToEndHeaders(of: head.headers, authority: ProxyRequest.authority(scheme: scheme, host: host, port: port))
        // The common cases' values are made once, not interpolated per request.
        if head.version == .http1_1 {
            headers.add(name: "Via", value: Self.responseVia)
        } else if head.version == .http2 {
            headers.add(name: "Via", value: Self.http2RequestVia)
        } else {
            HopByHopHeaders.addVia(to: &headers, version: head.version, pseudonym: Self.viaPseudonym)
        }
        return ProxyRequest(
            method: head.method,
            scheme: scheme,
            host: host,
            port: port,
            target: target,
            version: .http1_1,
            headers: headers,
            body: .passedThrough(declaredLength: declaredLength),
            upstreamName: index.map { active.config.upstreams[$0].name },
            tls: index.map { active.config.upstreams[$0].tls } ?? .standard,
            rewrittenFrom: rewrittenFrom,
            upstreamHTTPVersion: index.map { active.config.upstreams[$0].httpVersion } ?? .auto
        )
    }

    /// The client's fields as they go upstream, with no copy of them: hop-by-hop
    /// fields and those `Connection` names dropped (``HopByHopHeaders``),
    /// `Expect` dropped, `Host` set to `authority` (the client's kept in its
    /// place when it says the same, else dropped and one put first; duplicates
    /// dropped), the rest in their order. Room is left for `Via`, a credential
    /// and a `traceparent`.
    static func endToEndHeaders(of headers: RequestFields, authority: String) -> RequestFields {
        let named = headers.namesInConnection()
        var result = headers
        var hostPlaced = false
        result.removeAllFields { name, value in
            let count = name.count
            if HopByHopHeaders.isAlwaysHopByHop(name, from: 0, to: count) { return true }
            if count == 6, HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "expect") { return true }
            // Before the names `Connection` lists: a `Connection: host` does not take Host away.
            if count == 4, HTTP1HeadLines.equalsIgnoringCase(name, from: 0, to: count, "host") {
                guard !hostPlaced, HTTP1HeadLines.equals(value, authority) else { return true }
                hostPlaced = true
                return false
            }
            return !named.isEmpty && named.contains { RequestFields.equalsIgnoringCase(name, $0) }
        }
        result.reserveCapacity(hostPlaced ? 3 : 4)
        if !hostPlaced { result.prepend(name: "Host", value: authority) }
        return result
    }
}
