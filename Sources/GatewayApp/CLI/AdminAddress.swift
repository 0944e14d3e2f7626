import ArgumentParser
import Foundation
import GatewayConfig
import GatewayObservability

/// Where a running gateway's admin port is, for the commands that ask it
/// (`gateway stats`, `gateway faults|mocks|replay|record`): `--admin`, else
/// `listen.admin` of the config (`--config`, `$GATEWAY_CONFIG`, or
/// config/gateway.yaml when it exists; secrets not read), else the default port.
struct AdminAddress: ParsableArguments {
    @Option(name: .long, help: "The gateway's admin address (default: listen.admin of the config, else http://127.0.0.1:9090).")
    var admin: String?

    @OptionGroup var options: ConfigOptions

    func validate() throws {
        if let admin { _ = try Self.parse(admin) }
    }

    /// The admin address as a URL.
    func url() throws -> String {
        if let admin { return admin }
        let environment = ProcessInfo.processInfo.environment
        let path = options.resolvedPath(environment: environment)
        let named = options.config != nil || !(environment["GATEWAY_CONFIG"] ?? "").isEmpty
        guard named || FileManager.default.fileExists(atPath: path) else { return "http://127.0.0.1:9090" }
        do {
            let listen = try ConfigLoader.load(path: path, environment: environment, secrets: .skip).listen.admin
            return TraceProxyAddress.url(host: listen.host, port: listen.port)
        } catch {
            throw CommandFailure("\(error) (or give the admin address with --admin)")
        }
    }

    /// `http://host:port` (or `host:port`) → host and port; https is not served by the admin port.
    static func parse(_ text: String) throws -> (String, Int) {
        var rest = Substring(text)
        if let scheme = rest.range(of: "://") {
            guard rest[..<scheme.lowerBound].lowercased() == "http" else {
                throw ValidationError("--admin must be an http:// address, like http://127.0.0.1:9090")
            }
            rest = rest[scheme.upperBound...]
        }
        if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
        var host = rest
        var port = 80
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) ?? -1 }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            port = Int(rest[rest.index(after: colon)...]) ?? -1
        }
        guard !host.isEmpty, (1...65535).contains(port) else {
            throw ValidationError("--admin must look like http://127.0.0.1:9090, got '\(text)'")
        }
        return (String(host), port)
    }
}
