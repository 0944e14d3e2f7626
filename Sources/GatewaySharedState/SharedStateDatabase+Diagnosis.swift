import GatewayConfig
import NIOCore
import NIOSSL
import PostgresNIO

/// Why no connection could be made. The pool retries a refused login (a
/// wrong password, an unknown database, a `pg_hba.conf` rule) until
/// `connect_timeout`, which then reads as a timeout; one connection made
/// directly, outside the pool, gets the server's own answer. Asked only once
/// the pool gave none in time, and at most every ``diagnosisInterval`` (an
/// outage fails many operations at once).
extension SharedStateDatabase {
    static let diagnosisInterval: Duration = .seconds(10)

    /// The server's reason for refusing a connection (`server: password
    /// authentication failed for user "gateway"`), the client's (a refused TCP
    /// connection, a TLS failure), or nil when a direct connection succeeds.
    func connectFailureReason() async -> String? {
        let now = ContinuousClock.now
        if let last = lastDiagnosis.withLockedValue({ $0 }), now < last.at + Self.diagnosisInterval { return last.reason }
        let reason = await diagnoseConnect()
        lastDiagnosis.withLockedValue { $0 = (now, reason) }
        return reason
    }

    private func diagnoseConnect() async -> String? {
        do {
            let connection = try await PostgresConnection.connect(
                on: eventLoopGroup.any(), configuration: try Self.connectionConfiguration(config), id: 0, logger: logger
            ).get()
            try? await connection.close()
            return nil
        } catch {
            return Self.describe(error)
        }
    }

    /// The pool's connection settings (``clientConfiguration(_:)``) for one connection of its own.
    static func connectionConfiguration(_ config: PostgresStateConfig) throws -> PostgresConnection.Configuration {
        let endpoint = config.endpoint
        let tls: PostgresConnection.Configuration.TLS = try tlsConfiguration(config).map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable
        var configuration = PostgresConnection.Configuration(
            host: endpoint.host, port: endpoint.port, username: endpoint.username,
            password: endpoint.password, database: endpoint.database, tls: tls
        )
        configuration.options.connectTimeout = TimeAmount(config.connectTimeout)
        return configuration
    }
}
