import Foundation
import GatewayApp
import GatewayConfig
import GatewayCore
import GatewayListener
import GatewayPolicies
import Logging
import Testing
import GatewayTesting

/// The phases `ExchangePhases` builds, as the application holds them: one
/// route per upstream, built when the config loads and again on reload, each
/// holding only the steps its upstream configures, each bound to that
/// upstream's settings (a request's upstream picks the route; no step looks
/// the config up by name per request); and the admission steps, in order.
@Suite(.timeLimit(.minutes(1)))
struct ExchangePhasesTests {
    static func yaml(dir: String, attempts: Int, apiAuth: Bool) -> String {
        let auth = apiAuth ? "    auth:\n      type: bearer\n      token_file: \(dir)/token\n" : ""
        return """
        listen:
          proxy: 127.0.0.1:0
          admin: 127.0.0.1:0
        state_dir: \(dir)/state
        upstreams:
          - name: api
            hosts: [api.test]
            retry:
              attempts: \(attempts)
            rate_limit:
              requests_per_second: 5
        \(auth)  - name: payments
            hosts: [api.payments.test]
            auth:
              type: oauth2
              grant: client_credentials
              token_url: https://auth.payments.test/oauth/token
              client_id: binding-test
              client_secret_file: \(dir)/client-secret
          - name: limited
            hosts: [limited.test]
            rate_limit:
              requests_per_second: 2
          - name: plain
            hosts: [plain.test]

        """
    }

    /// The route's attempt steps, in order.
    func stepNames(_ route: UpstreamRoute) -> [String] {
        route.steps.map { "\(type(of: $0))" }
    }

    /// The attempts the route's retry planner allows a GET (nil: no planner).
    func maxAttempts(_ route: UpstreamRoute, host: String, upstream: String) -> Int? {
        guard let planner = route.retry else { return nil }
        guard case .retrying(let run) = planner.begin(request(host, upstream: upstream)) else { return 1 }
        return run.maxAttempts
    }

    func request(_ host: String, upstream: String?) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .https, host: host, port: 443, target: "/v1", headers: ["Host": host], upstreamName: upstream)
    }

    @Test func eachUpstreamGetsItsOwnBoundStepsAndAReloadRebuildsThem() throws {
        let dir = TestScratch.path("binding")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "tok-binding-1".write(toFile: "\(dir)/token", atomically: true, encoding: .utf8)
        try "client-secret-binding".write(toFile: "\(dir)/client-secret", atomically: true, encoding: .utf8)
        let path = "\(dir)/gateway.yaml"
        try Self.yaml(dir: dir, attempts: 3, apiAuth: true).write(toFile: path, atomically: true, encoding: .utf8)
        let app = GatewayApplication(
            config: try ConfigLoader.load(path: path), configPath: path,
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, handleSignals: false
        )
        let before = app.liveConfig.current.routes

        let api = before.route(forUpstream: "api")
        #expect(stepNames(api) == ["RateLimitStep", "AuthInjectionPolicy"], "rate limit and the static credential")
        #expect(maxAttempts(api, host: "api.test", upstream: "api") == 3)
        var toAPI = request("api.test", upstream: "api")
        let inject = try #require(api.steps.last as? AuthInjectionPolicy)
        inject.inject(into: &toAPI)
        #expect(toAPI.headers["Authorization"] == ["Bearer tok-binding-1"])

        let payments = before.route(forUpstream: "payments")
        #expect(stepNames(payments) == ["TokenRefreshStep"])
        #expect(payments.retry == nil)

        let limited = before.route(forUpstream: "limited")
        #expect(limited.retry == nil && stepNames(limited) == ["RateLimitStep"])
        for route in [before.route(forUpstream: "plain"), before.route(forUpstream: "unknown"), before.route(forUpstream: nil)] {
            #expect(route.retry == nil && route.steps.isEmpty)
        }

        // Reload: fewer attempts, no credential for api. New routes, new settings;
        // a route taken before the reload (an exchange in flight) keeps its own.
        try Self.yaml(dir: dir, attempts: 5, apiAuth: false).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(app.reload())
        let after = app.liveConfig.current.routes.route(forUpstream: "api")
        #expect(stepNames(after) == ["RateLimitStep"])
        #expect(maxAttempts(after, host: "api.test", upstream: "api") == 5)
        #expect(maxAttempts(api, host: "api.test", upstream: "api") == 3)
        var again = request("api.test", upstream: "api")
        for step in after.steps where step is AuthInjectionPolicy { (step as? AuthInjectionPolicy)?.inject(into: &again) }
        #expect(!again.headers.contains(name: "Authorization"))
    }

    /// The onboarding site (`http://gateway.invalid/`) sits after proxy authentication, before the access rules.
    @Test func proxyAuthIsAdmittedBeforeTheAccessRulesAndOnlyWhenConfigured() {
        var config = GatewayConfig()
        config.listen.proxy = BindAddress(host: "127.0.0.1", port: 0)
        config.listen.admin = BindAddress(host: "127.0.0.1", port: 0)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let withoutAuth = GatewayApplication(config: config, configPath: nil, logger: quiet, handleSignals: false)
        #expect(withoutAuth.liveConfig.current.admission.map { "\(type(of: $0))" } == ["OnboardingStep", "AccessStep"], "no proxy_auth, no step for it")

        config.proxyAuth = ProxyAuthConfig(realm: "gw", users: [ProxyUser(username: "u", password: Secret(source: .env("GATEWAY_TEST_PROXY_PASSWORD"), value: "p"))])
        let authenticated = GatewayApplication(config: config, configPath: nil, logger: quiet, handleSignals: false)
        #expect(authenticated.liveConfig.current.admission.map { "\(type(of: $0))" } == ["ProxyAuthStep", "OnboardingStep", "AccessStep"])
    }
}
