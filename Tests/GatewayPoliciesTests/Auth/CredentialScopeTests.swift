import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOHTTP1
import NIOEmbedded
import Testing

/// A credential belongs to an origin (scheme, host, port),
/// and goes over TLS unless the upstream opts in with an `http://` origin.
/// Outside its scope a request is forwarded without it.
@Suite(.timeLimit(.minutes(1)))
struct CredentialScopeTests {
    static let secret = Secret(source: .env("API_TOKEN"), value: "tok-Scope-9")

    func config(origin: String? = nil, ports: [Int]? = nil) -> GatewayConfig {
        var config = GatewayConfig()
        config.upstreams = [
            UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!], origin: origin.flatMap(UpstreamOrigin.init), ports: ports,
                auth: AuthConfig(kind: .bearer(token: Self.secret))
            )
        ]
        return config
    }

    func request(_ scheme: UpstreamScheme, _ host: String = "api.test", port: Int, method: HTTPMethod = .GET) -> ProxyRequest {
        ProxyRequest(method: method, scheme: scheme, host: host, port: port, target: "/v1", headers: ["Host": host], upstreamName: "api")
    }

    /// The policy as the route of the config's only upstream gets it.
    func policy(_ config: GatewayConfig) throws -> AuthInjectionPolicy {
        try #require(AuthInjectionPolicy(upstream: config.upstreams[0]))
    }

    func injected(_ request: ProxyRequest, _ config: GatewayConfig) throws -> Bool {
        var request = request
        try policy(config).inject(into: &request)
        return request.headers["Authorization"] == ["Bearer \(Self.secret.value)"]
    }

    @Test func onlyOverTLSToPort443ByDefault() throws {
        let config = config()
        #expect(try injected(request(.https, port: 443), config))
        #expect(try !injected(request(.http, port: 80), config), "cleartext: no credential")
        #expect(try !injected(request(.https, port: 25), config), "another port: no credential")
        #expect(try !injected(request(.http, port: 443), config))
        #expect(try policy(config).isInScope(request(.https, port: 443)))
        #expect(try !policy(config).isInScope(request(.http, port: 80)))
    }

    @Test func portsListWidensTheTLSScope() throws {
        let config = config(ports: [443, 8443])
        #expect(try injected(request(.https, port: 8443), config))
        #expect(try injected(request(.https, port: 443), config))
        #expect(try !injected(request(.https, port: 9443), config))
        #expect(try !injected(request(.http, port: 8443), config), "ports never allow cleartext")
    }

    @Test func anExplicitHTTPOriginOptsIntoCleartextForThatOriginOnly() throws {
        let config = config(origin: "http://127.0.0.1:8081")
        // The router sent the request to the origin.
        #expect(try injected(request(.http, "127.0.0.1", port: 8081), config))
        #expect(try !injected(request(.http, "127.0.0.1", port: 8082), config))
        #expect(try !injected(request(.https, "127.0.0.1", port: 8081), config))
    }

    @Test func anHTTPSOriginScopesToItself() throws {
        let config = config(origin: "https://api.test")
        #expect(try injected(request(.https, port: 443), config))
        #expect(try !injected(request(.http, port: 80), config))
    }

    /// Issue 54: `TRACE` and `TRACK` never carry the credential, in any case
    /// (a lowercase `trace` reaches the gateway as `.RAW("trace")`); a method
    /// that merely looks like them still does.
    @Test(arguments: ["TRACE", "trace", "Trace", "tRaCe", "TRACK", "track", "Track"])
    func anEchoMethodInAnyCaseGetsNoCredential(_ name: String) throws {
        let method = HTTPMethod(rawValue: name)
        #expect(!CredentialScope.mayCarryCredential(request(.https, port: 443, method: method)))
        #expect(try !injected(request(.https, port: 443, method: method), config()), "in scope, yet no credential")
    }

    @Test(arguments: ["GET", "PATCH", "TRACES", "TRAC", "tracK2", "PURGE", "tr@ce", "TRACT"])
    func otherMethodsStillGetIt(_ name: String) throws {
        #expect(try injected(request(.https, port: 443, method: HTTPMethod(rawValue: name)), config()))
    }

    @Test func outOfScopeRequestsKeepTheClientsOwnHeaders() async throws {
        let policy = try policy(config())
        var request = request(.http, port: 80)
        request.headers.add(name: "Authorization", value: "Bearer client-own")
        policy.inject(into: &request)
        #expect(request.headers["Authorization"] == ["Bearer client-own"])
    }

    @Test func tokenRefreshPolicyLeavesOutOfScopeRequestsAlone() throws {
        let f = try OAuthFixture()
        defer { f.cleanUp() }
        let policy = f.policy(f.makeStore())
        var plain = paymentsRequest()
        plain.scheme = .http
        plain.port = 80
        #expect(!policy.isInScope(plain))
        #expect(policy.isInScope(paymentsRequest()))
        guard case .proceed = policy.step.prepare(&plain, context: testContext(), on: EmbeddedEventLoop()) else {
            Issue.record("an out-of-scope request goes on at once"); return
        }
        #expect(!plain.headers.contains(name: "Authorization"))
        #expect(f.authority.tokenCallCount == 0, "no token fetched for a request that cannot carry it")
    }
}
