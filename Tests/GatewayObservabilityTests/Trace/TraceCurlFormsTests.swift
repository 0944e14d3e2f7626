import GatewayTesting
import GatewayConfig
import GatewayCore
import GatewayObservability
import NIOHTTP1
import Testing

/// The direct curl line puts the upstream's credential where the gateway puts it.
@Suite("Trace curl forms", .timeLimit(.minutes(1)))
struct TraceCurlFormsTests {
    func forms(_ kind: AuthConfig.Kind) -> TraceCurlForms {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: kind))]
        return TraceCurlForms(config: config, proxyURL: "http://127.0.0.1:8080")
    }

    /// Over TLS to port 443: within the credential's scope.
    func request(target: String, headers: HTTPHeaders = [:], scheme: UpstreamScheme = .https) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: scheme, host: "api.test", port: scheme.defaultPort, target: target, headers: RequestFields.lines(headers), body: .empty, upstreamName: "api")
    }

    /// As the auth policies: outside the credential's scope (plain http
    /// without an http:// origin) the direct line carries no credential either.
    @Test func outOfScopeRequestsGetNoCredentialInTheDirectLine() {
        let forms = forms(.bearer(token: Secret(source: .env("API_TOKEN"), value: "s3cret")))
        let plain = forms.direct(request(target: "/x", scheme: .http), body: .none, bodyLength: nil).line
        #expect(!plain.contains("API_TOKEN"), "\(plain)")
        let tls = forms.direct(request(target: "/x"), body: .none, bodyLength: nil).line
        #expect(tls.contains("Authorization: Bearer ${API_TOKEN}"), "\(tls)")
    }

    @Test func queryCredentialReplacesTheClientsValueInPlace() {
        let forms = forms(.query(parameter: "api_key", value: Secret(source: .env("API_KEY"), value: "s3cret")))
        let line = forms.direct(request(target: "/x?api_key=client&y=1"), body: .none, bodyLength: nil).line
        #expect(line.contains("api_key=${API_KEY}&y=1"), "\(line)")
        #expect(!line.contains("REDACTED_API_KEY"), "\(line)")
        #expect(line.components(separatedBy: "api_key=").count == 2, "one api_key pair: \(line)")
        #expect(!line.contains("s3cret"))

        let added = forms.direct(request(target: "/x?y=1"), body: .none, bodyLength: nil).line
        #expect(added.contains("?y=1&api_key=${API_KEY}"), "\(added)")
    }

    @Test func headerCredentialLeavesTheClientsAuthorization() {
        let forms = forms(.header(name: "X-API-Key", value: Secret(source: .env("API_KEY"), value: "s3cret")))
        let line = forms.direct(request(target: "/x", headers: ["Authorization": "Bearer user", "X-API-Key": "client"]), body: .none, bodyLength: nil).line
        #expect(line.contains("X-API-Key: ${API_KEY}"), "\(line)")
        #expect(line.contains("Authorization: ${REDACTED_AUTHORIZATION}"), "\(line)")
    }

    /// Through the gateway: the client's request as it sent it. The gateway's
    /// own `Via` (the last one) is left out and a client's kept; for an upstream
    /// with an origin, `Host` is the one the client asked for, not the origin's.
    @Test func throughLineShowsTheClientsHostAndDropsOnlyTheGatewaysVia() {
        let forms = forms(.bearer(token: Secret(source: .env("API_TOKEN"), value: "s3cret")))
        var routed = request(
            target: "/x",
            headers: ["Host": "10.0.0.7:8443", "Via": "1.1 corp-proxy", "X-A": "1", "Via": "1.1 gateway"]
        )
        routed.clientOrigin = "https://api.test"
        let line = forms.throughGateway(routed, body: .none, bodyLength: nil).line
        #expect(line.contains("-H 'Host: api.test' -H 'Via: 1.1 corp-proxy' -H 'X-A: 1' -H"), "\(line)")
        #expect(!line.contains("1.1 gateway"), "\(line)")
        #expect(line.hasSuffix("'https://api.test/x'"), "\(line)")

        let direct = forms.direct(routed, body: .none, bodyLength: nil).line
        #expect(direct.contains("-H 'Host: 10.0.0.7:8443'"), "\(direct)")
        #expect(direct.contains("-H 'Via: 1.1 gateway'"), "\(direct)")
    }
}
