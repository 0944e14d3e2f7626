import GatewayCore
import Testing

/// `clientAuthority`: the authority the client asked for, read from `clientOrigin`
/// by a byte scan (no Foundation `range(of:)` per traced request).
struct ProxyRequestAuthorityTests {
    private func request(clientOrigin: String?) -> ProxyRequest {
        var request = ProxyRequest(method: .GET, scheme: .https, host: "origin.internal", port: 8443, target: "/x", headers: [:])
        request.clientOrigin = clientOrigin
        return request
    }

    @Test(arguments: [
        ("http://api.example.com", "api.example.com"),
        ("http://127.0.0.1:18931", "127.0.0.1:18931"),
        ("http://[::1]:8080", "[::1]:8080"),
        ("https://a-much-longer-host-name.example.com:8443", "a-much-longer-host-name.example.com:8443"),
    ])
    func clientOriginsAuthority(_ origin: String, _ expected: String) {
        #expect(request(clientOrigin: origin).clientAuthority == expected)
    }

    @Test func withoutClientOriginItIsTheRequestsOwn() {
        #expect(request(clientOrigin: nil).clientAuthority == "origin.internal:8443")
        #expect(!request(clientOrigin: nil).hasClientOrigin)
        #expect(request(clientOrigin: "no-scheme").clientAuthority == "origin.internal:8443")
    }

    /// `authority` as a `Host` field gives it: the port only when it is not the
    /// scheme's default, an IPv6 literal in brackets, short and long hosts alike.
    @Test(arguments: [
        (UpstreamScheme.http, "127.0.0.1", 80, "127.0.0.1"),
        (.http, "127.0.0.1", 18080, "127.0.0.1:18080"),
        (.https, "api.example.com", 443, "api.example.com"),
        (.https, "api.example.com", 80, "api.example.com:80"),
        (.http, "::1", 8080, "[::1]:8080"),
        (.https, "::1", 443, "[::1]"),
        (.https, "a-much-longer-host-name.example.com", 8443, "a-much-longer-host-name.example.com:8443"),
    ])
    func authorityWritesThePortOnlyWhenNotTheDefault(_ scheme: UpstreamScheme, _ host: String, _ port: Int, _ expected: String) {
        #expect(ProxyRequest.authority(scheme: scheme, host: host, port: port) == expected)
        #expect(ProxyRequest(method: .GET, scheme: scheme, host: host, port: port, target: "/", headers: [:]).authority == expected)
    }

    /// The router keeps the client's own scheme, host and port as parts; the
    /// origin string and the authority are made from them when read, as the
    /// router once wrote them.
    @Test(arguments: [
        (UpstreamScheme.http, "api.example.com", 80, "http://api.example.com", "api.example.com"),
        (.http, "127.0.0.1", 18931, "http://127.0.0.1:18931", "127.0.0.1:18931"),
        (.https, "::1", 8443, "https://[::1]:8443", "[::1]:8443"),
        (.https, "::1", 443, "https://[::1]", "[::1]"),
    ])
    func aRewrittenRequestKeepsTheClientsOriginAsParts(
        _ scheme: UpstreamScheme, _ host: String, _ port: Int, _ origin: String, _ authority: String
    ) {
        var request = ProxyRequest(
            method: .GET, scheme: .https, host: "origin.internal", port: 8443, target: "/x", headers: [:],
            rewrittenFrom: ClientEndpoint(scheme: scheme, host: host, port: port)
        )
        #expect(request.hasClientOrigin)
        #expect(request.clientOrigin == origin)
        #expect(request.clientAuthority == authority)
        #expect(request.clientURLPrefix == origin)
        // A string given later replaces the parts.
        request.clientOrigin = "https://api.test"
        #expect(request.rewrittenFrom == nil)
        #expect(request.clientAuthority == "api.test")
    }
}
