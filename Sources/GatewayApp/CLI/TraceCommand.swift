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
        subcommands: [List.self, Show.self, Curl.self, Replay.self, HAR.self]
    )

    struct Source: ParsableArguments {
        @OptionGroup var options: ConfigOptions
        @Option(name: .long, help: "The trace file (default: trace.file from the config).")
        var file: String?

        func records() throws -> [TraceRecord] {
            let path: String
            if let file {
                path = file
            } else {
                let environment = ProcessInfo.processInfo.environment
                path = try ConfigLoader.load(path: options.resolvedPath(environment: environment), environment: environment, secrets: .skip).trace.file
            }
            return TraceFiles.records(path)
        }

        func record(_ id: String) throws -> TraceRecord {
            guard let record = try records().last(where: { $0.id == id }) else {
                throw CommandFailure("no trace record with id \(id)")
            }
            return record
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Recent exchanges: id, time, method, endpoint, status, attempts, duration.")
        @OptionGroup var source: Source
        @Option(name: .long, help: "Show at most this many (newest).")
        var limit = 50

        func run() throws {
            for r in try source.records().suffix(limit) {
                let status = r.status.map(String.init) ?? (r.error ?? "-")
                let upstream = r.upstream.map { "  upstream=\($0)" } ?? ""
                // Control and bidi characters of a path or header show as `\u{202E}`, never act on the terminal.
                print(TerminalSafety.escaped(
                    "\(r.id)  \(r.time)  \(r.method) \(r.endpoint)  \(status)  attempts=\(r.attempts.count)  \(String(format: "%.3f", r.duration))s\(upstream)"
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
