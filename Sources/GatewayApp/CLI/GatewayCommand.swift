public import ArgumentParser
import GatewayObservability

/// `gateway`: a local HTTP(S) proxy for API clients. `run` is the default.
public struct GatewayCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "A local HTTP gateway for API clients: auth injection, token refresh, retries, rate limits, TLS pinning, per-endpoint metrics.",
        discussion: """
            Point clients at it as their proxy: curl -x http://127.0.0.1:8080 ..., HTTP_PROXY / HTTPS_PROXY.
            The config file is --config, else $GATEWAY_CONFIG, else config/gateway.yaml.
            """,
        version: GatewayVersion.current,
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, PinsCommand.self, StatsCommand.self, TraceCommand.self,
            InjectionCommand<FaultsKind>.self, InjectionCommand<MocksKind>.self, InjectionCommand<ReplayKind>.self,
            InjectionCommand<RecordKind>.self, CACommand.self, DeviceCommand.self,
        ],
        defaultSubcommand: RunCommand.self
    )

    public init() {}
}

/// Where the config comes from: `--config`, else `GATEWAY_CONFIG`, else the default.
struct ConfigOptions: ParsableArguments {
    @Option(name: [.short, .long], help: "Path to the YAML config file (default: $GATEWAY_CONFIG or config/gateway.yaml).")
    var config: String?

    func resolvedPath(environment: [String: String]) -> String {
        if let config { return config }
        if let fromEnv = environment["GATEWAY_CONFIG"], !fromEnv.isEmpty { return fromEnv }
        return "config/gateway.yaml"
    }
}

/// A command that could not do its work (not a usage mistake): printed as
/// `Error: message` and exit status 1, without the usage text.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
