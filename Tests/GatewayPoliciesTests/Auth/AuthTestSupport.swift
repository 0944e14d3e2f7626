import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Records `tokenRefresh` events as `trigger/result` strings.
final class RecordingAuthEvents: GatewayEvents {
    private let box = NIOLockedValueBox<[String]>([])
    var refreshes: [String] { box.withLockedValue { $0 } }

    func tokenRefresh(upstream: String, trigger: String, result: String) {
        box.withLockedValue { $0.append("\(upstream)/\(trigger)/\(result)") }
    }
}

/// Log lines of the code under test, to assert that secrets never appear.
final class AuthLogCapture: Sendable {
    private let lines = NIOLockedValueBox<[String]>([])
    var text: String { lines.withLockedValue { $0.joined(separator: "\n") } }

    var logger: Logger {
        var logger = Logger(label: "auth-test") { _ in
            ClosureLogHandler { [self] event, metadata in
                append("\(event.level) \(event.message) \(metadata.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
            }
        }
        logger.logLevel = .trace
        return logger
    }

    func append(_ line: String) { lines.withLockedValue { $0.append(line) } }
}


/// A store on a fresh state directory, talking to `authority` in process.
struct OAuthFixture {
    static let tokenURL = "https://auth.test/oauth/token"

    let authority: OAuthTestAuthority
    let stateDir: String
    let clock: ManualClock
    let events = RecordingAuthEvents()
    let logs = AuthLogCapture()
    var oauth: OAuth2Config

    init(grant: OAuth2Config.Grant = .refreshToken, expiresIn: Int = 3600, method: OAuth2Config.ClientAuthMethod = .clientSecretBasic) throws {
        authority = OAuthTestAuthority(expiresIn: expiresIn)
        stateDir = TestScratch.path("gw-auth", suffix: "/state")
        clock = ManualClock()
        oauth = OAuth2Config(
            grant: grant,
            tokenURL: Self.tokenURL,
            clientID: Secret(source: .env("PAY_CLIENT_ID"), value: authority.clientID),
            clientSecret: Secret(source: .file("/run/secrets/pay_client_secret"), value: authority.clientSecret!),
            refreshToken: grant == .refreshToken ? Secret(source: .file("/run/secrets/pay_refresh_token"), value: authority.initialRefreshToken) : nil,
            scope: "read write",
            clientAuthMethod: method,
            refreshBeforeExpiry: .seconds(60)
        )
    }

    var route: TokenEndpointRoute {
        TokenEndpointRoute(tokenURL: Self.tokenURL, config: GatewayConfig())!
    }

    func makeStore(timeout: Duration = .seconds(30), transport: (any HTTPRequestSender)? = nil) -> TokenStore {
        TokenStore(
            upstream: "payments", config: oauth, stateDir: stateDir, route: route,
            transport: transport ?? authority.tokenEndpoint, clock: clock, events: events, timeout: timeout, logger: logs.logger
        )
    }

    /// A config whose `payments` upstream uses this credential.
    func gatewayConfig(clientAuth: ClientAuthMode = .replace) -> GatewayConfig {
        var config = GatewayConfig()
        config.stateDir = stateDir
        config.upstreams = [
            UpstreamConfig(name: "payments", hosts: [HostPattern("api.payments.test")!], auth: AuthConfig(kind: .oauth2(oauth), clientAuth: clientAuth))
        ]
        return config
    }

    func policy(_ store: TokenStore, clientAuth: ClientAuthMode = .replace) -> TokenRefreshPolicy {
        let upstream = gatewayConfig(clientAuth: clientAuth).upstreams[0]
        return TokenRefreshPolicy(store: store, clientAuth: clientAuth, scope: upstream.credentialScope)
    }

    /// Every secret the test knows: configured ones and all tokens issued so far.
    var secrets: [String] {
        [authority.clientSecret!, authority.initialRefreshToken] + authority.issuedAccessTokens + authority.issuedRefreshTokens
    }

    func cleanUp() {
        try? FileManager.default.removeItem(atPath: (stateDir as NSString).deletingLastPathComponent)
    }
}

func paymentsRequest(method: HTTPMethod = .GET, body: ProxyBody = .empty, headers: HTTPHeaders = [:], upstream: String? = "payments") -> ProxyRequest {
    var all: HTTPHeaders = ["Host": "api.payments.test"]
    all.add(contentsOf: headers)
    return ProxyRequest(method: method, scheme: .https, host: "api.payments.test", port: 443, target: "/v1/charges", headers: RequestFields.lines(all), body: body, upstreamName: upstream)
}

func testContext(_ logger: Logger = Logger(label: "test")) -> RequestContext {
    RequestContext(id: "t", clientAddress: "127.0.0.1:1", logger: logger)
}

/// Polls `condition` (bounded) without sleeping on a fixed schedule guess.
func eventually(_ timeout: Duration = .seconds(10), _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}
