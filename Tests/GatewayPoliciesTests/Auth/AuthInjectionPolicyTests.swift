import GatewayTesting
import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import NIOHTTP1
import Testing

/// Static credentials: what each type puts on the request, and when it does not.
@Suite(.timeLimit(.minutes(1)))
struct AuthInjectionPolicyTests {
    /// The request as its credential step leaves it.
    func send(_ kind: AuthConfig.Kind, clientAuth: ClientAuthMode = .replace, target: String = "/v1/x", headers: HTTPHeaders = [:]) throws -> ProxyRequest {
        let policy = try #require(AuthInjectionPolicy(auth: AuthConfig(kind: kind, clientAuth: clientAuth)))
        var all: HTTPHeaders = ["Host": "api.test"]
        all.add(contentsOf: headers)
        var request = ProxyRequest(method: .GET, scheme: .https, host: "api.test", port: 443, target: target, headers: RequestFields.lines(all), upstreamName: "api")
        policy.inject(into: &request)
        return request
    }

    static let secret = Secret(source: .env("API_TOKEN"), value: "tok-Secr3t/+=&x")

    @Test func bearer() throws {
        let r = try send(.bearer(token: Self.secret))
        #expect(r.headers["Authorization"] == ["Bearer tok-Secr3t/+=&x"])
    }

    @Test func header() throws {
        let r = try send(.header(name: "X-API-Key", value: Self.secret), headers: ["x-api-key": "client", "Authorization": "Basic Y2xpZW50"])
        #expect(r.headers["X-API-Key"] == ["tok-Secr3t/+=&x"])
        #expect(r.headers["X-API-Key"].count == 1)
        // Only the credential's own slot is the gateway's: an API key next to the
        // user's own Authorization reaches the upstream as both.
        #expect(r.headers["Authorization"] == ["Basic Y2xpZW50"])
    }

    @Test func basic() throws {
        let r = try send(.basic(username: "svc", password: Self.secret))
        let expected = "Basic " + Data("svc:tok-Secr3t/+=&x".utf8).base64EncodedString()
        #expect(r.headers["Authorization"] == [expected])
    }

    @Test func queryIsPercentEncodedAndReplacesTheClientsParameter() throws {
        let r = try send(.query(parameter: "api_key", value: Self.secret), target: "/v1/x?a=1&api_key=client&b=%20")
        #expect(r.target == "/v1/x?a=1&b=%20&api_key=tok-Secr3t%2F%2B%3D%26x")
        let plain = try send(.query(parameter: "api_key", value: Self.secret), target: "/v1/x")
        #expect(plain.target == "/v1/x?api_key=tok-Secr3t%2F%2B%3D%26x")
    }

    @Test func replaceIsTheDefaultAndRemovesTheClientsAuthorization() throws {
        let r = try send(.bearer(token: Self.secret), headers: ["authorization": "Bearer client-own", "Authorization": "Basic x"])
        #expect(r.headers["Authorization"] == ["Bearer tok-Secr3t/+=&x"])
    }

    @Test func keepLeavesARequestWithItsOwnCredentialUntouched() throws {
        let kept = try send(.bearer(token: Self.secret), clientAuth: .keep, headers: ["Authorization": "Bearer client-own"])
        #expect(kept.headers["Authorization"] == ["Bearer client-own"])
        let keptQuery = try send(.query(parameter: "api_key", value: Self.secret), clientAuth: .keep, target: "/x?api_key=mine")
        #expect(keptQuery.target == "/x?api_key=mine")
        let added = try send(.bearer(token: Self.secret), clientAuth: .keep)
        #expect(added.headers["Authorization"] == ["Bearer tok-Secr3t/+=&x"])
    }

    @Test func oauth2IsNotAStaticCredential() {
        let oauth = OAuth2Config(grant: .clientCredentials, tokenURL: "https://a.test/t", clientID: Secret(source: .inline, value: "id"))
        #expect(AuthInjectionPolicy(auth: AuthConfig(kind: .oauth2(oauth))) == nil)
        #expect(AuthInjectionPolicy(upstream: UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: .oauth2(oauth)))) == nil)
        #expect(AuthInjectionPolicy(upstream: UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!])) == nil)
    }

    /// The policy is bound to its upstream's credential and scope when the
    /// route is built. Which upstream a request belongs to chooses the route
    /// (see ExchangePhasesTests); the policy itself still keeps the
    /// credential to its upstream's hosts whatever the request's name says.
    @Test func theCredentialStaysWithinItsUpstreamsHosts() throws {
        let upstream = UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], auth: AuthConfig(kind: .bearer(token: Self.secret)))
        let policy = try #require(AuthInjectionPolicy(upstream: upstream))
        #expect(policy.scope == upstream.credentialScope)
        for name in ["api", "other", nil] as [String?] {
            var own = ProxyRequest(method: .GET, scheme: .https, host: "api.test", port: 443, target: "/v1", headers: ["Host": "api.test"], upstreamName: name)
            policy.inject(into: &own)
            #expect(own.headers["Authorization"] == ["Bearer tok-Secr3t/+=&x"])
            var foreign = ProxyRequest(method: .GET, scheme: .https, host: "other.test", port: 443, target: "/v1?q=1", headers: ["Host": "other.test"], upstreamName: name)
            policy.inject(into: &foreign)
            #expect(!foreign.headers.contains(name: "Authorization"))
            #expect(foreign.target == "/v1?q=1")
        }
    }
}
