import ArgumentParser
import Foundation
import GatewayConfig
import GatewayCore
import Logging
import NIOPosix

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
        var cliLevel: Logger.Level?
        if let logLevel {
            guard let parsed = Logger.Level(rawValue: logLevel.lowercased()) else {
                throw ValidationError("unknown log level '\(logLevel)'")
            }
            cliLevel = parsed
        }
        // CLI flags win over the file, at start and on every SIGHUP reload.
        let overrides: @Sendable (inout GatewayConfig) -> Void = { [debug, cliLevel] config in
            if debug { config.debug = true }
            if let cliLevel { config.logLevel = cliLevel }
        }
        var config: GatewayConfig
        do {
            config = try ConfigLoader.load(path: path, environment: environment)
            overrides(&config)
        } catch {
            InvalidConfigReport.write(error)
            throw ExitCode(2)
        }
        let level = config.logLevel
        LoggingSystem.bootstrap { label in
            var handler = GatewayLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "gateway")
        logger.logLevel = level
        logger.notice("starting with config \(path)")
        for warning in config.warnings {
            logger.warning("config: \(warning)")
        }
        let loops = EventLoopCount.forThisProcess()
        logger.info("running \(loops) event loop(s)")
        let app = GatewayApplication(
            config: config, configPath: path, logger: logger,
            eventLoopGroup: MultiThreadedEventLoopGroup(numberOfThreads: loops), overrides: overrides
        )
        do {
            try await app.run()
        } catch {
            logger.critical("gateway stopped: \(error)")
            throw ExitCode(1)
        }
    }
}
