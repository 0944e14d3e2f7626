import Testing
@testable import GatewayObservability

@Suite(.timeLimit(.minutes(1)))
struct StatsTableTests {
    func entry(_ endpoint: String, count: Int, p95: Double) -> StatsReport.EndpointStats {
        StatsReport.EndpointStats(
            upstream: "api", method: "GET", endpoint: endpoint, count: count, rps: Double(count) / 300, errorPct: 1.5,
            p50Ms: p95 / 2, p95Ms: p95, p99Ms: p95 * 1.2, maxMs: p95 * 2, retries: 3, slices: []
        )
    }

    @Test func rendersSortedRows() {
        let report = StatsReport(windowSeconds: 300, sliceSeconds: 30, uptimeSeconds: 42, endpoints: [
            entry("/fast", count: 900, p95: 0.42), entry("/slow/{id}", count: 10, p95: 1250),
        ])
        let byP95 = StatsTable.render(report).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(byP95[0].hasPrefix("gateway stats: last 5m (uptime 42s), 2 endpoints, 910 requests, sorted by p95"))
        #expect(byP95[2].hasPrefix("UPSTREAM  METHOD  ENDPOINT"))
        #expect(byP95[3].contains("/slow/{id}") && byP95[3].contains("1.25s") && byP95[3].contains("1.5%"))
        #expect(byP95[4].contains("/fast") && byP95[4].contains("0.42ms"))
        let byCount = StatsTable.render(report, sort: .count).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(byCount[3].contains("/fast"))
        #expect(StatsTable.render(report, limit: 1).split(separator: "\n").count == 3)
    }

    @Test func formats() {
        #expect(StatsTable.millis(0.4249) == "0.42ms")
        #expect(StatsTable.millis(12.34) == "12.3ms")
        #expect(StatsTable.millis(250.4) == "250ms")
        #expect(StatsTable.millis(12_500) == "12.5s")
        #expect(StatsTable.fixed(0.05, 1) == "0.1")
        #expect(StatsTable.duration(3700) == "61m")
    }

    @Test func emptyWindow() {
        let text = StatsTable.render(StatsReport(windowSeconds: 300, sliceSeconds: 30, uptimeSeconds: 1, endpoints: []))
        #expect(text.contains("no requests in the window yet"))
    }
}
