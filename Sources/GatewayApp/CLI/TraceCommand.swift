import ArgumentParser
import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability

/// `gateway trace list|show ID|curl ID [--direct]|replay ID [--direct]|har`: reads
/// the debug trace file (`trace.file` of the config, or `--file`) and every
/// rotated copy the writer keeps, oldest first.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Inspect debug traces: list exchanges, show one, print its curl line, replay it, export HAR.",
        discussion: "Traces are written while debug is on: `gateway run --debug`, or `debug: true` in the config.",
        subcommands: [List.self, Show.self, Curl.self, Replay.self, HAR.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recent exchanges: id, time, method, endpoint, status, attempts, duration.",
            discussion: """
                The endpoint is the host and the path template the metrics use: the upstream's configured \
                `endpoints:` first, then numeric, UUID and hex segments as {id} (`trace show ID` has the path). \
                Without a trace file it says where it looked and exits 1.
                """
        )
        @OptionGroup var source: Source
        @Option(name: .long, help: "Show at most this many (newest).")
        var limit = 50

        func run() throws {
            let records = try source.records()
            if records.isEmpty {
                FileHandle.standardError.write(Data("gateway: the trace file holds no exchange yet\n".utf8))
            }
            let templates = try source.endpointTemplates()
            for r in records.suffix(limit) {
                let status = r.status.map(String.init) ?? (r.error ?? "-")
                let upstream = r.upstream.map { "  upstream=\($0)" } ?? ""
                let endpoint = r.endpointTemplate(templates)
                // Control and bidi characters of a path or header show as `\u{202E}`, never act on the terminal.
                print(TerminalSafety.escaped(
                    "\(r.id)  \(r.time)  \(r.method) \(endpoint)  \(status)  attempts=\(r.attempts.count)  \(String(format: "%.3f", r.duration))s\(upstream)"
                ))
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The whole record (JSON) with per-attempt phases.")
        @OptionGroup var source: Source
        @Argument var id: String

        func run() throws {
            // Valid JSON still: a control or bidi character in a string as its `\u` escape.
            let line = String(decoding: try source.record(id).jsonLine().dropLast(), as: UTF8.self)
            print(TerminalSafety.escaped(line, style: .json))
        }
    }

    struct Curl: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The curl line replaying the request through the gateway, or --direct as sent upstream.")
        @OptionGroup var source: Source
        @Argument var id: String
        @Flag(name: .long, help: "The request as sent upstream, credentials as shell variables.")
        var direct = false

        func run() throws {
            let record = try source.record(id)
            // Lines of older trace files may hold control or bidi characters as
            // they are: written as `$(printf ...)`, they read back the same.
            print(ShellQuoting.terminalSafeLine(direct ? record.curlDirect : record.curl))
        }
    }
}
