import ArgumentParser
import Foundation
import GatewayConfig
import GatewayObservability

/// `gateway stats`: a `top`-like table of a running gateway's endpoints, read
/// from its admin port's `/stats` (exact percentiles over the sliding window).
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show per-endpoint count, rps, error %, p50/p95/p99/max latency and retries of a running gateway.",
        discussion: "Reads /stats from the admin port (metrics.stats_window, 5 minutes by default). The same table is on the admin page at /."
    )

    @Option(name: .long, help: "The gateway's admin address (default: listen.admin of the config, else http://127.0.0.1:9090).")
    var admin: String?

    @OptionGroup var options: ConfigOptions

    @Option(name: .long, help: "Sort by p95 (slowest first) or count (busiest first).")
    var sort: StatsSortOption = .p95

    @Option(name: .long, help: "Show at most this many endpoints.")
    var limit: Int?

    @Flag(name: .long, help: "Refresh the table until interrupted.")
    var watch = false

    @Option(name: .long, help: "Seconds between refreshes with --watch.")
    var interval: Double = 2

    @Flag(name: .long, help: "Print the raw /stats JSON instead of the table.")
    var json = false

    func validate() throws {
        if let admin { _ = try Self.parseAdmin(admin) }
        guard interval >= 0.2 else { throw ValidationError("--interval must be at least 0.2 seconds") }
    }

    /// `--admin`, else the config's `listen.admin` (from --config, $GATEWAY_CONFIG,
    /// or config/gateway.yaml when it exists; secrets not read), else the default port.
    func adminURL() throws -> String {
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

    func run() async throws {
        let admin = try adminURL()
        let (host, port) = try Self.parseAdmin(admin)
        repeat {
            let output: String
            do {
                let response = try await AdminClient.get(host: host, port: port, path: "/stats")
                guard response.status == 200 else {
                    throw AdminClient.Failure(description: "\(admin)/stats answered HTTP \(response.status)")
                }
                if json {
                    output = String(decoding: response.body, as: UTF8.self) + "\n"
                } else {
                    output = StatsTable.render(try StatsReport.decode(response.body), sort: sort.order, limit: limit)
                }
            } catch {
                FileHandle.standardError.write(Data("gateway stats: \(error)\n".utf8))
                if !watch { throw ExitCode(1) }
                try await Task.sleep(for: .seconds(interval))
                continue
            }
            // Home and clear the screen between refreshes, as top does.
            print(watch ? "\u{1B}[H\u{1B}[2J" + output : output, terminator: "")
            if watch { try await Task.sleep(for: .seconds(interval)) }
        } while watch
    }

    /// `http://host:port` (or `host:port`) → host and port; https is not served by the admin port.
    static func parseAdmin(_ text: String) throws -> (String, Int) {
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

/// `--sort`: p95 (slowest first) or count (busiest first).
enum StatsSortOption: String, ExpressibleByArgument, CaseIterable {
    case p95, count

    var order: StatsTable.Sort { self == .p95 ? .p95 : .count }
}
