import ArgumentParser
import Foundation
import GatewayConfig
import GatewaySharedState
import Logging

/// `gateway check-config FILE`: validate and print the effective config,
/// secrets redacted; with `shared_state`, whether the database answers.
/// Lists every problem it finds, not only the first; `--no-secrets` checks a
/// config whose secrets are not at hand (CI).
struct CheckConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config file and print the effective config with secrets redacted.",
        discussion: """
            Exits 0 when the file is valid, 2 when it is not, listing every problem found, each with the file and key path. \
            A secret's environment variable that is not set (or secret file that cannot be read) is one of those problems; \
            --no-secrets checks everything else without reading them (for CI, where they are not set). \
            With shared_state, also connects to the database and says whether it answers (exit 3 when it does not; \
            skipped with --no-secrets, as its URL is a secret).
            """
    )

    @Argument(help: "The config file (default: --config, else $GATEWAY_CONFIG, else config/gateway.yaml).")
    var file: String?

    @OptionGroup var options: ConfigOptions

    @Flag(name: .long, help: "Check the file without reading its secrets (environment variables, secret files): they need not be set.")
    var noSecrets = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path = file ?? options.resolvedPath(environment: environment)
        let config: GatewayConfig
        do {
            config = try ConfigLoader.load(path: path, environment: environment, secrets: noSecrets ? .skip : .resolve)
        } catch {
            InvalidConfigReport.write(error)
            throw ExitCode(2)
        }
        print(config.redactedYAML(), terminator: "")
        for warning in config.warnings {
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
        let clients = config.upstreams.enumerated().map { ("upstreams[\($0.offset)]", $0.element.tls.clientCertificate) } + [("tracing", config.tracing.tls.clientCertificate)]
        for case let (owner, client?) in clients {
            FileHandle.standardError.write(Data("\(owner).tls.client_certificate: \(client.summary())\n".utf8))
        }
        FileHandle.standardError.write(Data("\(path): OK\(noSecrets ? " (secrets not read)" : "")\n".utf8))
        if let postgres = config.sharedState?.postgres, !noSecrets {
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
