import Foundation
import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewaySharedState
import GatewayTesting
import Logging

/// A throwaway PostgreSQL cluster with N "replicas" (one ``SharedStateDatabase``
/// each, running), and an OAuth2 credential whose token endpoint is an
/// in-process ``OAuthTestAuthority``.
final class SharedStateFixture: Sendable {
    let cluster: PostgresTestCluster
    let databases: [SharedStateDatabase]
    let authority: OAuthTestAuthority
    let stateDir: String
    let runners: [Task<Void, Never>]
    static let tokenURL = "https://auth.payments.test/oauth/token"

    static func start(replicas: Int, onUnavailable: PostgresStateConfig.OnUnavailable = .local, expiresIn: Int = 3600) async throws -> SharedStateFixture {
        let cluster = try await PostgresTestCluster.start()
        var databases: [SharedStateDatabase] = []
        var runners: [Task<Void, Never>] = []
        for _ in 0..<replicas {
            let database = SharedStateDatabase(config: Self.config(cluster.url, onUnavailable: onUnavailable), logger: Logger(label: "test.shared"))
            runners.append(Task { await database.run() })
            databases.append(database)
        }
        // Replicas starting together: every one migrates (idempotent, serialized by the lock).
        try await withThrowingTaskGroup(of: Int.self) { group in
            for database in databases { group.addTask { try await database.migrate() } }
            for try await _ in group {}
        }
        return SharedStateFixture(cluster: cluster, databases: databases, runners: runners, expiresIn: expiresIn)
    }

    static func config(_ url: String, onUnavailable: PostgresStateConfig.OnUnavailable = .local) -> PostgresStateConfig {
        guard case .success(let endpoint) = PostgresURL.parse(url) else { fatalError("bad test URL") }
        return PostgresStateConfig(url: Secret(source: .env("GATEWAY_DATABASE_URL"), value: url), endpoint: endpoint, onUnavailable: onUnavailable, connectTimeout: .seconds(2))
    }

    private init(cluster: PostgresTestCluster, databases: [SharedStateDatabase], runners: [Task<Void, Never>], expiresIn: Int) {
        self.cluster = cluster
        self.databases = databases
        self.runners = runners
        self.authority = OAuthTestAuthority(expiresIn: expiresIn)
        self.stateDir = TestScratch.path("gw-shared")
    }

    var oauth: OAuth2Config {
        OAuth2Config(
            grant: .refreshToken,
            tokenURL: Self.tokenURL,
            clientID: Secret(source: .env("PAY_CLIENT_ID"), value: authority.clientID),
            clientSecret: Secret(source: .env("PAY_CLIENT_SECRET"), value: authority.clientSecret!),
            refreshToken: Secret(source: .env("PAY_REFRESH_TOKEN"), value: authority.initialRefreshToken),
            refreshBeforeExpiry: .seconds(60)
        )
    }

    /// Replica `index`'s token store (its own state directory, as on its own machine).
    func store(replica index: Int, shared: Bool = true, clock: any PolicyClock = SystemPolicyClock(), lockTimeout: Duration = .seconds(30)) -> TokenStore {
        TokenStore(
            upstream: "payments", config: oauth, stateDir: "\(stateDir)/replica-\(index)",
            route: TokenEndpointRoute(tokenURL: Self.tokenURL, config: GatewayConfig())!,
            transport: authority.tokenEndpoint, clock: clock,
            shared: shared ? PostgresTokenCoordinator(database: databases[index], lockTimeout: lockTimeout) : nil,
            logger: Logger(label: "test.tokens")
        )
    }

    func stop() async {
        for runner in runners { runner.cancel() }
        for runner in runners { await runner.value }
        await cluster.stop()
        try? FileManager.default.removeItem(atPath: stateDir)
    }
}
