import Foundation
import GatewayConfig
import GatewayPolicies
@testable import GatewaySharedState
import GatewayTesting
import Logging
import PostgresNIO
import Testing

/// TLS to the shared database: `verify-full` checks the server's certificate
/// against `ca_file` (and its name), `require` encrypts without checking.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SharedStateTLSTests {
    static func database(_ cluster: PostgresTestCluster, tls: PostgresStateConfig.TLSMode, caFile: String?) -> SharedStateDatabase {
        var config = SharedStateFixture.config(cluster.url)
        config.tls = tls
        config.caFile = caFile
        config.connectTimeout = .seconds(3)
        return SharedStateDatabase(config: config, logger: Logger(label: "test.tls"))
    }

    /// Whether this session's connection uses TLS (`pg_stat_ssl`).
    static func usesTLS(_ database: SharedStateDatabase) async throws -> Bool {
        try await database.withConnection("ssl", requiresSchema: false) { session in
            for try await ssl in try await session.connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", logger: Logger(label: "test")).decode(Bool.self) {
                return ssl
            }
            return false
        }
    }

    @Test func verifyFullConnectsOverTLSAndRefusesAnUnknownCA() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let directory = try TestCertificates.makeTemporaryDirectory(prefix: "gw-pg-tls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try certificates.write(to: directory)
        let cluster = try await PostgresTestCluster.start(tls: (certificates.serverChainPEM, certificates.leaf.privateKeyPEM))
        let verified = Self.database(cluster, tls: .verifyFull, caFile: paths.caBundle)
        let pool = Task { await verified.run() }
        #expect(try await verified.migrate() == SharedStateSchema.latestVersion)
        #expect(try await Self.usesTLS(verified))
        pool.cancel()

        // Another CA: verify-full refuses; require (no verification) still encrypts.
        let stranger = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let strangerPaths = try stranger.write(to: try TestCertificates.makeTemporaryDirectory(prefix: "gw-pg-tls-other"))
        let refused = Self.database(cluster, tls: .verifyFull, caFile: strangerPaths.caBundle)
        let refusedPool = Task { await refused.run() }
        await #expect(throws: SharedStateUnavailable.self) { _ = try await refused.serverVersion() }
        refusedPool.cancel()
        let encrypted = Self.database(cluster, tls: .require, caFile: nil)
        let encryptedPool = Task { await encrypted.run() }
        #expect(try await Self.usesTLS(encrypted))
        encryptedPool.cancel()
        await cluster.stop()
    }
}
