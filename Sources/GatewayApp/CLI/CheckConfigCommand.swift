import ArgumentParser
import Foundation
import GatewayConfig

/// `gateway check-config FILE`: validate and print the effective config, secrets redacted.
struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a config file and print the effective config with secrets redacted.",
        discussion: "Exits 0 when the file is valid, 2 with the file, key path and problem when it is not."
    )

    @Argument(help: "The config file (default: --config, else $GATEWAY_CONFIG, else config/gateway.yaml).")
    var file: String?

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let path = file ?? options.resolvedPath(environment: environment)
        do {
            let config = try ConfigLoader.load(path: path, environment: environment)
            print(config.redactedYAML(), terminator: "")
            for warning in config.warnings {
                FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
            }
            FileHandle.standardError.write(Data("\(path): OK\n".utf8))
        } catch {
            FileHandle.standardError.write(Data("gateway: invalid config: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
