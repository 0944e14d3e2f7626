import ArgumentParser
import Foundation
import GatewayConfig
import GatewayListener

/// `gateway device`: what to type into a phone's Wi-Fi proxy settings (this
/// machine's LAN addresses and the proxy port), whether the proxy asks for a
/// password, and the onboarding page to open on the phone. It never suggests
/// listening beyond loopback without `proxy_auth` (the config refuses that
/// unless `open: true`, and so does this advice).
struct DeviceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Set up a phone or another device: the proxy address and port to enter on it, and the page that installs the CA.",
        discussion: "Exits 0 when a device on the LAN can reach the proxy as configured, 1 when the config has to change first (it says how)."
    )

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let path = options.resolvedPath(environment: environment)
        let config: GatewayConfig
        do {
            config = try ConfigLoader.load(path: path, environment: environment, secrets: .skip)
        } catch {
            InvalidConfigReport.write(error)
            throw ExitCode(2)
        }
        let advice = DeviceAdvice(config: config, configPath: path, interfaces: LANAddresses.current())
        print(advice.text, terminator: "")
        if !advice.reachable { throw ExitCode(1) }
    }
}
