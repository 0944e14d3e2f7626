import ArgumentParser
import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability

extension TraceCommand {
    /// `gateway trace har [--since DURATION] [--upstream NAME] [--id ID ...] [-o FILE]`:
    /// the selected records as a HAR 1.2 file, for browser DevTools, Charles,
    /// Proxyman, Insomnia or k6's converter.
    struct HAR: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Export exchanges as HAR 1.2 (headers, query, post data, sizes, phase timings), secrets as ${NAME} placeholders.",
            discussion: """
                Every record of the trace file and its rotated copies, oldest first, unless selected by \
                --since (10m, 2h, 90s), --upstream and --id (repeatable: any of the ids); the filters given all apply. \
                timings: blocked, dns (-1: part of connect), connect, ssl, send, wait, receive do not overlap, \
                so an entry's time is their sum (-1s left out). Custom fields: _id, _upstream, _attempts, _gatewayError.
                """
        )
        @OptionGroup var source: Source
        @Option(name: .long, help: "Only exchanges that started at most this long ago (250ms, 10s, 5m, 2h).")
        var since: String?
        @Option(name: .long, help: "Only exchanges of this configured upstream.")
        var upstream: String?
        @Option(name: .customLong("id"), help: "Only the exchange with this id (repeatable).")
        var ids: [String] = []
        @Option(name: .shortAndLong, help: "Write to this file, mode 0600 (default: standard output).")
        var output: String?

        func run() throws {
            let selection = try TraceSelection(since: since, upstream: upstream, ids: ids)
            let records = try source.records().filter(selection.matches)
            let bytes = try HARExport.fromFiles.json(records)
            if let output {
                // It holds request bodies and headers: private from its first byte (mode 0600).
                do {
                    try PrivateFile.write(bytes, to: output)
                } catch let error as PrivateFileError {
                    throw CommandFailure("cannot write \(output): \(error.reason)")
                }
                FileHandle.standardError.write(Data("gateway: wrote \(records.count) entries to \(output)\n".utf8))
            } else {
                // Valid JSON to a file or a pipe, and safe on a terminal: `HARExport.json`
                // writes control and bidi characters inside strings as `\u` escapes.
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
