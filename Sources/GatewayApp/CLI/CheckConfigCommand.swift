import ArgumentParser
import Foundation
import GatewayConfig
import GatewaySharedState
import Logging

/// `gateway check-config FILE`: validate and print the effective config,
/// secrets redacted; with `shared_state`, whether the database answers.
struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config file and print the effective config with secrets redacted.",
        discussion: """
            Exits 0 when the file is valid, 2 with the file, key path and problem when it is not. \
            With shared_state, also connects to the database and says whether it answers (exit 3 when it does not).
            """
    )

    @Argument(help: "The config file (default: --config, else $GATEWAY_CONFIG, else config/gateway.yaml).")
    var file: String?

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path = file ?? options.resolvedPath(environment: environment)
        let config: GatewayConfig
        do {
            config = try ConfigLoader.load(path: path, environment: environment)
        } catch {
            FileHandle.standardError.write(Data("gateway: invalid config: \(error)\n".utf8))
            throw ExitCode(2)
        }
        print(config.redactedYAML(), terminator: "")
        for warning in config.warnings {
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
        FileHandle.standardError.write(Data("\(path): OK\n".utf8))
        if let postgres = config.sharedState?.postgres {
            guard await Self.probe(postgres) else { throw ExitCode(3) }
        }
    }

    /// Connects once and reports the server version, or why it did not answer.
    static func probe(_ postgres: PostgresStateConfig) async -> Bool {
        var logger = Logger(label: "gateway.check-config")
        logger.logLevel = .critical
        let database = SharedStateDatabase(config: postgres, logger: logger)
        let pool = Task { await database.run() }
        defer { pool.cancel() }
        do {
            let version = try await database.serverVersion()
            FileHandle.standardError.write(Data("shared_state: \(postgres.endpoint) answers (PostgreSQL \(version))\n".utf8))
            return true
        } catch {
            FileHandle.standardError.write(Data("shared_state: \(postgres.endpoint) does not answer: \(error)\n".utf8))
            return false
        }
    }
}
