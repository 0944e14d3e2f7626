extension GatewayMetrics {
    /// The `/stats` document: every endpoint with traffic in the window, by p95 (slowest first).
    public func statsReport() -> StatsReport {
        let now = now()
        let sliceSeconds = statsWindow.seconds / Double(statsSlices)
        let entries = endpoints.all.compactMap { recorder -> StatsReport.EndpointStats? in
            let snapshot = recorder.snapshot(at: now)
            guard snapshot.count > 0 else { return nil }
            return StatsReport.EndpointStats(key: recorder.key, snapshot: snapshot, sliceSeconds: sliceSeconds)
        }
        return StatsReport(
            windowSeconds: statsWindow.seconds,
            sliceSeconds: sliceSeconds,
            uptimeSeconds: ((now - startedAt).seconds * 1000).rounded() / 1000,
            endpoints: entries.sorted(by: StatsReport.EndpointStats.slowestFirst)
        )
    }
}

extension StatsReport.EndpointStats {
    /// By p95 descending, then by name.
    public static func slowestFirst(_ a: Self, _ b: Self) -> Bool {
        if a.p95Ms != b.p95Ms { return a.p95Ms > b.p95Ms }
        return (a.upstream, a.endpoint, a.method) < (b.upstream, b.endpoint, b.method)
    }

    /// By count descending, then by name.
    public static func busiestFirst(_ a: Self, _ b: Self) -> Bool {
        if a.count != b.count { return a.count > b.count }
        return (a.upstream, a.endpoint, a.method) < (b.upstream, b.endpoint, b.method)
    }
}
