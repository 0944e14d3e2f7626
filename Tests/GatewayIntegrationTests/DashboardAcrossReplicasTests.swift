import Foundation
import GatewayTesting
import Testing

/// The dashboard's own queries, evaluated by promtool over series scraped from
/// two gateway replicas: rates and latency quantiles add up across instances
/// (histogram buckets summed before `histogram_quantile`), and the shared
/// state panel counts the replicas that reach the database.
@Suite(.timeLimit(.minutes(1)))
struct DashboardAcrossReplicasTests {
    /// `title` → its expressions, with Grafana's variables given values.
    static func dashboardExpressions() throws -> [String: [String]] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dashboards/gateway.json")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var byTitle: [String: [String]] = [:]
        for panel in dashboard["panels"] as? [[String: Any]] ?? [] {
            guard let title = panel["title"] as? String else { continue }
            for target in panel["targets"] as? [[String: Any]] ?? [] {
                guard let expr = target["expr"] as? String else { continue }
                let concrete = expr.replacingOccurrences(of: "$__rate_interval", with: "5m")
                    .replacingOccurrences(of: "\"$upstream\"", with: "\".*\"")
                    .replacingOccurrences(of: "\"$endpoint\"", with: "\".*\"")
                byTitle[title, default: []].append(concrete)
            }
        }
        return byTitle
    }

    static func series(_ name: String, _ instance: String, _ labels: String, _ values: String) -> String {
        "      - series: '\(name){instance=\"\(instance)\",job=\"gateway\"\(labels)}'\n        values: '\(values)'\n"
    }

    static func exprTest(_ expr: String, _ samples: [(labels: String, value: String)]) -> String {
        var text = "      - expr: '\(expr.replacingOccurrences(of: "'", with: "''"))'\n        eval_time: 10m\n        exp_samples:\n"
        for sample in samples { text += "          - labels: '\(sample.labels)'\n            value: \(sample.value)\n" }
        return text
    }

    @Test func theDashboardSumsOverReplicas() async throws {
        let promtool = try #require(which("promtool"), "promtool (Debian's prometheus package) is needed; .ci/run installs it")
        let panels = try Self.dashboardExpressions()
        let endpoint = ",upstream=\"payments\",endpoint=\"/v1/charges\",method=\"GET\""
        var input = ""
        // Replica a: 1 request/s, all under 100 ms. Replica b: 2/s ok + 1/s 5xx, all between 100 and 500 ms.
        input += Self.series("gateway_requests_total", "a:9090", endpoint + ",status_class=\"2xx\"", "0+60x10")
        input += Self.series("gateway_requests_total", "b:9090", endpoint + ",status_class=\"2xx\"", "0+120x10")
        input += Self.series("gateway_requests_total", "b:9090", endpoint + ",status_class=\"5xx\"", "0+60x10")
        for (le, a, b) in [("0.1", "0+60x10", "0+0x10"), ("0.5", "0+60x10", "0+180x10"), ("+Inf", "0+60x10", "0+180x10")] {
            input += Self.series("gateway_request_duration_seconds_bucket", "a:9090", endpoint + ",le=\"\(le)\"", a)
            input += Self.series("gateway_request_duration_seconds_bucket", "b:9090", endpoint + ",le=\"\(le)\"", b)
        }
        input += Self.series("gateway_shared_state_up", "a:9090", "", "1x10")
        input += Self.series("gateway_shared_state_up", "b:9090", "", "0x10")

        let rate = try #require(panels["Request rate by endpoint"]?.first)
        let errorRate = try #require(panels["Error rate by endpoint (5xx + gateway errors)"]?.first)
        let latency = try #require(panels["Latency p50 / p95 / p99 (selection)"])
        let shared = try #require(panels.first { $0.key.hasPrefix("Shared state") }?.value)
        let labels = "{upstream=\"payments\",method=\"GET\",endpoint=\"/v1/charges\"}"
        var tests = ""
        tests += Self.exprTest(rate, [(labels, "4")])
        tests += Self.exprTest(errorRate, [(labels, "25")])
        // 4 requests/s: 1 at or under 0.1 s, 3 in (0.1, 0.5]: p50 = 0.1 + 0.4 × (2 − 1) / 3, p95 = 0.1 + 0.4 × (3.8 − 1) / 3.
        tests += Self.exprTest(latency[0], [("{}", "0.23333333333333334")])
        tests += Self.exprTest(latency[1], [("{}", "0.4733333333333333")])
        tests += Self.exprTest(shared[0], [("{}", "1")])
        tests += Self.exprTest(shared[1], [("{}", "2")])
        let file = "rule_files: []\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" + input + "    promql_expr_test:\n" + tests
        let path = TestScratch.path("gw-dashboard", suffix: ".yaml")
        try file.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await ProcessRunner.run(promtool, ["test", "rules", path])
        #expect(result.status == 0, "\(result.stdoutString)\(result.stderrString)\n\(file)")
    }
}
