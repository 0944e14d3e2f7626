import GatewayConfig
import Testing

@Suite("shared_state")
struct SharedStateConfigTests {
    static let url = "postgres://gw%40ops:s3cr%2Ft-pw@db.internal:6543/gateway?sslmode=verify-full"
    static let env = ["GATEWAY_DATABASE_URL": url]

    @Test func absentMeansAlone() {
        #expect(TestSupport.parse("open: false\n")?.sharedState == nil)
    }

    @Test func everyFieldAndTheURLParts() throws {
        let yaml = """
            shared_state:
              postgres:
                url_env: GATEWAY_DATABASE_URL
                on_unavailable: fail
                connect_timeout: 500ms
                query_timeout: 3s
                max_connections: 8
                rate_limit_lease: 50ms
                sync_interval: 1s
            """
        let postgres = try #require(TestSupport.parse(yaml, environment: Self.env)?.sharedState?.postgres)
        #expect(postgres.endpoint == PostgresURL(host: "db.internal", port: 6543, username: "gw@ops", password: "s3cr/t-pw", database: "gateway", sslMode: .verifyFull))
        #expect(postgres.tls == .verifyFull)
        #expect(postgres.onUnavailable == .fail)
        #expect(postgres.connectTimeout == .milliseconds(500))
        #expect(postgres.queryTimeout == .seconds(3))
        #expect(postgres.maxConnections == 8)
        #expect(postgres.rateLimitLease == .milliseconds(50))
        #expect(postgres.syncInterval == .seconds(1))
        #expect(postgres.leaseSize(rate: 10, burst: 10) == 1)
        #expect(postgres.leaseSize(rate: 1000, burst: 20) == 20)
        #expect(postgres.leaseSize(rate: 1000, burst: 500) == 50)
    }

    @Test func defaults() throws {
        let postgres = try #require(TestSupport.parse("shared_state: {postgres: {url_env: DB}}\n", environment: ["DB": "postgres://gateway@127.0.0.1/gateway"])?.sharedState?.postgres)
        #expect(postgres.endpoint.port == 5432)
        #expect(postgres.endpoint.password == nil)
        #expect(postgres.tls == .disable)
        #expect(postgres.onUnavailable == .local)
        #expect(postgres.connectTimeout == .seconds(2))
        #expect(postgres.queryTimeout == .seconds(5))
        #expect(postgres.rateLimitLease == .milliseconds(100))
    }

    @Test func aBadURLNamesTheKeyNotThePassword() {
        TestSupport.expectError(
            "shared_state: {postgres: {url_env: DB}}\n", keyPath: "shared_state.postgres.url_env", contains: "scheme must be postgres://",
            environment: ["DB": "mysql://u:hunter2-secret@h/db"]
        )
        let error = TestSupport.error(of: "shared_state: {postgres: {url_env: DB}}\n", environment: ["DB": "postgres://u:hunter2-secret@h:99999/db"])
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("port") == true)
    }

    @Test func invalidValuesNameTheirKey() {
        let environment = ["DB": "postgres://gateway@127.0.0.1/gateway"]
        TestSupport.expectError("shared_state: {postgres: {}}\n", keyPath: "shared_state.postgres", contains: "url_env", environment: environment)
        TestSupport.expectError("shared_state: {}\n", keyPath: "shared_state", contains: "postgres", environment: environment)
        TestSupport.expectError("shared_state: {postgres: {url_env: DB, on_unavailable: maybe}}\n", keyPath: "shared_state.postgres.on_unavailable", contains: "local, fail", environment: environment)
        TestSupport.expectError("shared_state: {postgres: {url_env: DB, max_connections: 0}}\n", keyPath: "shared_state.postgres.max_connections", contains: "between 1 and 64", environment: environment)
        TestSupport.expectError("shared_state: {postgres: {url_env: DB, query_timeout: 0s}}\n", keyPath: "shared_state.postgres.query_timeout", contains: "at least 10ms", environment: environment)
        TestSupport.expectError("shared_state: {postgres: {url_env: DB, ca_file: /tmp/ca.pem}}\n", keyPath: "shared_state.postgres.ca_file", contains: "verify-full", environment: environment)
        TestSupport.expectError("shared_state: {postgres: {url_env: MISSING}}\n", keyPath: "shared_state.postgres.url_env", contains: "MISSING is not set", environment: environment)
    }

    @Test func theRedactedConfigShowsTheVariableNotTheURL() throws {
        let config = try #require(TestSupport.parse("shared_state: {postgres: {url_env: GATEWAY_DATABASE_URL}}\n", environment: Self.env))
        let yaml = config.redactedYAML()
        #expect(yaml.contains("url_env: GATEWAY_DATABASE_URL"))
        #expect(yaml.contains("query_timeout: 5s"))
        #expect(yaml.contains("postgres://gw@ops@db.internal:6543/gateway"))
        #expect(!yaml.contains("s3cr"))
        #expect(!"\(config.sharedState!)".contains("s3cr"))
    }
}
