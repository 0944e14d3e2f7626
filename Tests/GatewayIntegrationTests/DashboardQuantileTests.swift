import Foundation
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// The dashboard's own p95 queries, evaluated by Prometheus (promtool) over
/// the gateway's exposition of fixed-seed samples, are within 10% of the
/// exact p95: the buckets (``MetricFamily/latencyBuckets``) are fine enough
/// from 50 ms to 5 s for `histogram_quantile`'s interpolation.
@Suite(.timeLimit(.minutes(1)))
struct DashboardQuantileTests {
    static func p95(_ samples: [Double]) -> Double {
        let sorted = samples.sorted()
        return sorted[Int((0.95 * Double(sorted.count)).rounded(.up)) - 1]
    }

    @Test func dashboardP95IsWithinTenPercentOfTheExactOne() async throws {
        let promtool = try #require(which("promtool"), "promtool (Debian's prometheus package) is needed; .ci/run installs it")
        let panels = try DashboardAcrossReplicasTests.dashboardExpressions()
        let byEndpoint = try #require(panels["p95 by endpoint"]?.first)
        let selection = try #require(panels["Latency p50 / p95 / p99 (selection)"]?.first { $0.hasPrefix("histogram_quantile(0.95") })

        var random = SeededRandom(seed: 614)
        let shapes: [(endpoint: String, samples: [Double])] = [
            ("/slow/{id}", (0..<5_000).map { _ in random.logNormal(median: 0.45, sigma: 0.2) }),
            ("/uniform", (0..<5_000).map { _ in Double.random(in: 0.05...5, using: &random) }),
            ("/bimodal", (0..<5_000).map { _ in
                Double.random(in: 0..<1, using: &random) < 0.9 ? random.logNormal(median: 0.08, sigma: 0.1) : random.logNormal(median: 1.3, sigma: 0.1)
            }),
        ]
        let metrics = GatewayMetrics()
        for shape in shapes {
            let recorder = metrics.endpoint(upstream: "api", method: "GET", endpoint: shape.endpoint, configured: true, maxEndpoints: 10)
            for seconds in shape.samples {
                recorder.record(CompletedExchange(duration: .nanoseconds(Int64(seconds * 1e9)), statusClass: .success, attempts: AttemptList()), at: .now)
            }
        }
        // Each bucket grows by its scraped count every minute: rates keep the exposition's proportions.
        var input = ""
        for line in String(decoding: metrics.exposition(), as: UTF8.self).split(separator: "\n")
        where line.hasPrefix("gateway_request_duration_seconds_bucket{") {
            let space = try #require(line.lastIndex(of: " "))
            input += "      - series: '\(line[..<space])'\n        values: '0+\(line[line.index(after: space)...])x10'\n"
        }
        func within10Percent(_ expr: String, exact: Double, labels: String) -> String {
            let test = "(abs((\(expr)) - \(exact)) / \(exact)) <= bool 0.1"
            return "      - expr: '\(test.replacingOccurrences(of: "'", with: "''"))'\n        eval_time: 10m\n        exp_samples:\n"
                + "          - labels: '\(labels)'\n            value: 1\n"
        }
        var tests = ""
        for shape in shapes {
            let one = byEndpoint.replacingOccurrences(of: #"endpoint=~".*""#, with: "endpoint=\"\(shape.endpoint)\"")
            #expect(one != byEndpoint)
            tests += within10Percent(one, exact: Self.p95(shape.samples), labels: "{upstream=\"api\",method=\"GET\",endpoint=\"\(shape.endpoint)\"}")
        }
        tests += within10Percent(selection, exact: Self.p95(shapes.flatMap(\.samples)), labels: "{}")
        let file = "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + input + "    promql_expr_test:\n" + tests
        let path = TestScratch.path("gw-quantile", suffix: ".yaml")
        try file.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await ProcessRunner.run(promtool, ["test", "rules", path])
        #expect(result.status == 0, "\(result.stdoutString)\(result.stderrString)")
    }
}
