import Foundation
import GatewayConfig
import GatewayPolicies
@testable import GatewaySharedState
import GatewayTesting
import Logging
import Testing

/// A database that refuses the login (a wrong password) is reported as such,
/// not as a connection timeout: the pool retries a refused login until
/// `connect_timeout`, and the gateway then asks the server directly why.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedStateLoginFailureTests {
    @Test func aWrongPasswordIsReportedAsTheServerSaysIt() async throws {
        let cluster = try await PostgresTestCluster.start()
        defer { Task { await cluster.stop() } }
        try await cluster.requirePassword()

        let wrong = cluster.url.replacingOccurrences(of: ":test-pw-9x@", with: ":not-the-password@")
        let database = SharedStateDatabase(config: SharedStateFixture.config(wrong), logger: Logger(label: "test.login"))
        let pool = Task { await database.run() }
        defer { pool.cancel() }
        var reason = ""
        do {
            _ = try await database.serverVersion()
            Issue.record("a wrong password logged in")
        } catch let error as SharedStateUnavailable {
            reason = error.reason
        }
        #expect(reason.contains("password authentication failed"), "\(reason)")
        #expect(reason.hasPrefix("no database connection within"), "\(reason)")
        #expect(!reason.contains("not-the-password"))

        // The right password still logs in.
        let right = SharedStateDatabase(config: SharedStateFixture.config(cluster.url), logger: Logger(label: "test.login"))
        let rightPool = Task { await right.run() }
        defer { rightPool.cancel() }
        #expect(try await right.serverVersion().isEmpty == false)
    }
}
