import ArgumentParser
import Foundation
import GatewayConfig
import GatewayObservability

extension TraceCommand {
    /// Where the `trace` subcommands read records: `--file`, else `trace.file`
    /// of the config, with every rotated copy the writer keeps, oldest first.
    struct Source: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Option(name: .long, help: "The trace file (default: trace.file from the config).")
        var file: String?

        /// The records of the trace file and its rotated copies, oldest first.
        /// Throws, saying where it looked and how to turn traces on, when
        /// none of those files exists.
        func records() throws -> [TraceRecord] {
            let (path, config) = try location()
            guard !TraceFiles.existing(path).isEmpty else {
                throw CommandFailure(noTraceFileMessage(path, config: config))
            }
            return TraceFiles.records(path)
        }

        func record(_ id: String) throws -> TraceRecord {
            guard let record = try records().last(where: { $0.id == id }) else {
                throw CommandFailure("no trace record with id \(id)")
            }
            return record
        }

        /// The templates the metrics label endpoints with: the config's
        /// `endpoints:` first, then numeric, UUID and hex segments as `{id}`.
        /// With `--file` and no config to read, the automatic ones only.
        func endpointTemplates() throws -> EndpointTemplates {
            EndpointTemplates(config: try location().config?.config ?? GatewayConfig())
        }

        /// The trace file, and the config (with its path) when one was read:
        /// always without `--file`; with it, only to template endpoints (an
        /// explicit `--config` or `GATEWAY_CONFIG` must load, the default one
        /// may be absent).
        private func location() throws -> (file: String, config: (path: String, config: GatewayConfig)?) {
            let environment = ProcessInfo.processInfo.environment
            let path = options.resolvedPath(environment: environment)
            func load() throws -> (path: String, config: GatewayConfig) {
                (path, try ConfigLoader.load(path: path, environment: environment, secrets: .skip))
            }
            guard let file else {
                let loaded = try load()
                return (loaded.config.trace.file, loaded)
            }
            let explicit = options.config != nil || !(environment["GATEWAY_CONFIG"] ?? "").isEmpty
            return (file, explicit ? try load() : try? load())
        }

        /// Where `trace` looked, and how to have the gateway write traces there.
        private func noTraceFileMessage(_ path: String, config loaded: (path: String, config: GatewayConfig)?) -> String {
            let shown = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            let message = "no trace file: looked for \(shown) and its rotated copies (\((shown as NSString).lastPathComponent).1, ...)"
            guard let loaded, file == nil else {
                return message + " (--file). Traces are written while debug is on: `gateway run --debug`, or `debug: true` in the config."
            }
            guard !loaded.config.debug else {
                return message + ", the trace.file of \(loaded.path). debug is on there: the gateway writes the file once it has proxied a request with that config."
            }
            return message + ", the trace.file of \(loaded.path). Traces are written while debug is on: `gateway run --debug`, or `debug: true` in \(loaded.path)."
        }
    }
}
