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

    func request(target: String, headers: HTTPHeaders = [:]) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: target, headers: headers, body: .empty, upstreamName: "api")
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
}
