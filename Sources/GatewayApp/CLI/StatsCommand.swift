import ArgumentParser
import Foundation
import GatewayObservability

/// `gateway stats`: a `top`-like table of a running gateway's endpoints, read
/// from its admin port's `/stats` (exact percentiles over the sliding window).
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show per-endpoint count, rps, error %, p50/p95/p99/max latency and retries of a running gateway.",
        discussion: "Reads /stats from the admin port (metrics.stats_window, 5 minutes by default). The same table is on the admin page at /."
    )

    @OptionGroup var address: AdminAddress

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
        guard interval >= 0.2 else { throw ValidationError("--interval must be at least 0.2 seconds") }
    }

    func run() async throws {
        let admin = try address.url()
        let (host, port) = try AdminAddress.parse(admin)
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
}

/// `--sort`: p95 (slowest first) or count (busiest first).
enum StatsSortOption: String, ExpressibleByArgument, CaseIterable {
    case p95, count

    var order: StatsTable.Sort { self == .p95 ? .p95 : .count }
}
