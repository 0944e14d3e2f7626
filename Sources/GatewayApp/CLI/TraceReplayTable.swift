import Foundation
import GatewayObservability

/// What curl's `-w` reported for a replay (`TraceCommand.Replay.writeOut`).
struct CurlTimings: Equatable {
    var status: Int
    /// Seconds from the start, as curl measures them.
    var connect: Double
    var appConnect: Double
    var startTransfer: Double
    var total: Double
    var bytes: Int

    /// Parses the last `gateway-replay ...` line of curl's stdout; nil when absent.
    init?(writeOut: String) {
        guard let line = writeOut.split(separator: "\n").last(where: { $0.hasPrefix("gateway-replay ") }) else { return nil }
        // Some locales print decimal commas.
        let fields = line.split(separator: " ").dropFirst().map { $0.replacingOccurrences(of: ",", with: ".") }
        guard fields.count == 6, let status = Int(fields[0]),
              let connect = Double(fields[1]), let appConnect = Double(fields[2]),
              let startTransfer = Double(fields[3]), let total = Double(fields[4]),
              let bytes = Double(fields[5]) else { return nil }
        self.status = status
        self.connect = connect
        self.appConnect = appConnect
        self.startTransfer = startTransfer
        self.total = total
        self.bytes = Int(bytes)
    }
}

/// The side-by-side table `trace replay` prints.
///
/// The original column is the gateway's own measurement: the last upstream
/// attempt's phases (connect and TLS are `-` on a reused connection), the
/// client-visible duration and response bytes. The replay column is curl's,
/// from the client side: through the gateway, connect is the connection to the
/// gateway; TLS is the handshake through a CONNECT tunnel, if any.
struct ReplayTable {
    let rows: [(name: String, original: String, replay: String)]
    let direct: Bool

    init(original record: TraceRecord, replay: CurlTimings?, direct: Bool) {
        self.direct = direct
        let last = record.attempts.last
        let failed = replay.map { $0.status == 0 } ?? true
        rows = [
            ("status", record.status.map(String.init) ?? record.error ?? "-", replay.map { $0.status == 0 ? "failed" : String($0.status) } ?? "failed"),
            ("attempts", String(record.attempts.count), "-"),
            ("connect", Self.ms(last?.connect), Self.ms(replay.flatMap { $0.connect > 0 ? $0.connect : nil })),
            ("TLS", Self.ms(last?.tls), Self.ms(replay.flatMap { $0.appConnect > 0 ? $0.appConnect - $0.connect : nil })),
            ("TTFB", Self.ms(last?.ttfb), Self.ms(failed ? nil : replay?.startTransfer)),
            ("total", Self.ms(record.duration), Self.ms(replay?.total)),
            ("bytes", String(record.responseBytes), replay.map { String($0.bytes) } ?? "-"),
        ]
    }

    static func ms(_ seconds: Double?) -> String {
        guard let seconds else { return "-" }
        return String(format: "%.1f ms", seconds * 1000)
    }

    var text: String {
        let width = max(10, rows.map(\.original.count).max() ?? 0) + 2
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
        var out = pad("", 10) + pad("original", width) + (direct ? "replay (direct)" : "replay") + "\n"
        for row in rows { out += pad(row.name, 10) + pad(row.original, width) + row.replay + "\n" }
        out += "original: the gateway's phases of the last upstream attempt, total = whole exchange; replay: curl's timings"
        out += direct ? " (straight to the upstream).\n" : " (connect = to the gateway).\n"
        return out
    }
}
