/// Renders a `StatsReport` as a `top`-like text table for `gateway stats`.
public enum StatsTable {
    public enum Sort: String, Sendable, CaseIterable {
        case p95, count
    }

    public static func render(_ report: StatsReport, sort: Sort = .p95, limit: Int? = nil) -> String {
        var endpoints = report.endpoints.sorted(by: sort == .p95 ? StatsReport.EndpointStats.slowestFirst : StatsReport.EndpointStats.busiestFirst)
        let total = endpoints.count
        if let limit, limit >= 0 { endpoints = Array(endpoints.prefix(limit)) }
        let requests = report.endpoints.reduce(0) { $0 + $1.count }
        var lines: [String] = []
        lines.append(
            "gateway stats: last \(duration(report.windowSeconds)) (uptime \(duration(report.uptimeSeconds))), "
                + "\(total) endpoint\(total == 1 ? "" : "s"), \(requests) request\(requests == 1 ? "" : "s"), sorted by \(sort.rawValue)"
        )
        let header = ["UPSTREAM", "METHOD", "ENDPOINT", "COUNT", "RPS", "ERR%", "P50", "P95", "P99", "MAX", "RETRIES"]
        var rows: [[String]] = [header]
        for e in endpoints {
            rows.append([
                e.upstream, e.method, e.endpoint, String(e.count), number(e.rps), percent(e.errorPct),
                millis(e.p50Ms), millis(e.p95Ms), millis(e.p99Ms), millis(e.maxMs), String(e.retries),
            ])
        }
        if endpoints.isEmpty {
            lines.append("")
            lines.append("no requests in the window yet")
            return lines.joined(separator: "\n") + "\n"
        }
        let leftAligned: Set<Int> = [0, 1, 2]
        var widths = Array(repeating: 0, count: header.count)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
        }
        widths[2] = min(widths[2], 60)
        lines.append("")
        for row in rows {
            let cells = row.enumerated().map { i, cell -> String in
                var text = cell
                if text.count > widths[i] { text = String(text.prefix(widths[i] - 1)) + "…" }
                let padding = String(repeating: " ", count: widths[i] - text.count)
                return leftAligned.contains(i) ? text + padding : padding + text
            }
            lines.append(cells.joined(separator: "  ").trimmingTrailingSpaces())
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `0.42ms`, `12.3ms`, `250ms`, `1.25s`.
    static func millis(_ ms: Double) -> String {
        if ms >= 1000 { return fixed(ms / 1000, ms >= 10_000 ? 1 : 2) + "s" }
        if ms >= 100 { return fixed(ms, 0) + "ms" }
        if ms >= 10 { return fixed(ms, 1) + "ms" }
        return fixed(ms, 2) + "ms"
    }

    static func number(_ value: Double) -> String {
        value >= 100 ? fixed(value, 0) : value >= 10 ? fixed(value, 1) : fixed(value, 2)
    }

    static func percent(_ value: Double) -> String {
        fixed(value, 1) + "%"
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s < 120 { return "\(s)s" }
        if s < 7200 { return "\(s / 60)m" }
        return "\(s / 3600)h\(s % 3600 / 60)m"
    }

    /// Fixed-point without Foundation's `String(format:)`.
    static func fixed(_ value: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = Int64((abs(value) * scale).rounded())
        let sign = value < 0 && scaled != 0 ? "-" : ""
        guard decimals > 0 else { return sign + String(scaled) }
        let whole = scaled / Int64(scale)
        var fraction = String(scaled % Int64(scale))
        while fraction.count < decimals { fraction = "0" + fraction }
        return "\(sign)\(whole).\(fraction)"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
