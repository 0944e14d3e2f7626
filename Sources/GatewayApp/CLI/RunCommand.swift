import ArgumentParser
import Foundation
import GatewayConfig
import Logging

/// `gateway run`: start the proxy and admin listeners.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run the gateway (the default command).",
        discussion: "SIGHUP reloads the config file; SIGTERM or SIGINT stops accepting, drains in-flight requests, and exits 0."
    )

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Override the log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: String?

    @Flag(name: .long, help: "Write debug traces (as `debug: true`): a JSON Lines record and a curl line per exchange.")
    var debug = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let path = options.resolvedPath(environment: environment)
        var config: GatewayConfig
        do {
            config = try ConfigLoader.load(path: path, environment: environment)
            if debug { config.debug = true }
        } catch {
            FileHandle.standardError.write(Data("gateway: invalid config: \(error)\n".utf8))
            throw ExitCode(2)
        }
        var level = config.logLevel
        if let logLevel {
            guard let parsed = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("unknown log level '\(logLevel)'")
            }
            level = parsed
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "gateway")
        logger.logLevel = level
        logger.notice("starting with config \(path)")
        for warning in config.warnings {
            logger.warning("config: \(warning)")
        }
        let app = GatewayApplication(config: config, configPath: path, logger: logger)
        do {
            try await app.run()
        } catch {
            logger.critical("gateway stopped: \(error)")
            throw ExitCode(1)
        }
    }
}
