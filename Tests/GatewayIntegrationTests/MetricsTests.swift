import Foundation
import GatewayConfig
import GatewayCore
import GatewayListener
import GatewayObservability
import GatewayTesting
import Logging
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// Per-endpoint metrics through the running gateway: Prometheus counts, labels
/// and phases after real requests, `/stats`, `gateway stats`, the admin page,
/// the dashboard's metric names against a live scrape, and exposition validity.
@Suite(.timeLimit(.minutes(3)))
struct MetricsTests {
    func apiUpstream(_ upstream: TestUpstream, endpoints: [String] = ["GET /users/{id}"]) -> UpstreamConfig {
        UpstreamConfig(
            name: "api", hosts: [HostPattern("api.test")!],
            origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port),
            endpoints: endpoints.map { EndpointTemplate($0)! }
        )
    }

    func scrape(_ gateway: GatewayHarness) async throws -> String {
        let result = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/metrics"])
        #expect(result.status == 0, "\(result.stderrString)")
        return result.stdoutString
    }

    /// The value of the sample `name{labels}` in an exposition, nil when absent.
    func sample(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func countsLabelsAndPhasesForFreshAndReusedConnections() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { $0.upstreams = [apiUpstream(upstream)] }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // One curl, one client connection: the second and third requests reuse the upstream connection.
        let result = try await gateway.curl(["-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null",
                                             "http://api.test/users/1?x=1", "http://api.test/users/2", "http://api.test/status/503"])
        #expect(result.status == 0, "\(result.stderrString)")
        #expect(upstream.connectionsAccepted == 1)

        let text = try await scrape(gateway)
        let users = #"upstream="api",endpoint="/users/{id}",method="GET""#
        let status = #"upstream="api",endpoint="/status/{id}",method="GET""#
        // The test upstream has no /users route: 404s, which count by their class.
        #expect(sample(text, "gateway_requests_total{\(users),status_class=\"4xx\"}") == 2, "\(text)")
        #expect(sample(text, "gateway_requests_total{\(status),status_class=\"5xx\"}") == 1)
        #expect(sample(text, "gateway_request_duration_seconds_count{\(users)}") == 2)
        #expect(sample(text, "gateway_upstream_attempts_total{\(users),status_class=\"4xx\"}") == 2)
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(users),phase=\"connect\"}") == 1, "only the fresh connection has a connect phase")
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(users),phase=\"ttfb\"}") == 2)
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(users),phase=\"total\"}") == 2)
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(status),phase=\"connect\"}") == nil, "a reused connection records no connect phase")
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(status),phase=\"ttfb\"}") == 1)
        #expect(!text.contains("phase=\"tls\""), "plain http has no TLS phase")
        let connectSum = try #require(sample(text, "gateway_upstream_phase_seconds_sum{\(users),phase=\"connect\"}"))
        #expect(connectSum > 0 && connectSum < 1)
        #expect(sample(text, "gateway_upstream_connections_open") == 1)
        #expect(text.contains("gateway_client_connections_open "))
    }

    @Test func tlsUpstreamHasATLSPhase() async throws {
        let certificates = try TestCertificates(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"])
        let paths = try certificates.write(to: try TestCertificates.makeTemporaryDirectory())
        let upstream = try await TestUpstream.start(tls: try certificates.makeServerContext())
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [
                UpstreamConfig(
                    name: "secure", hosts: [HostPattern("secure.test")!],
                    origin: UpstreamOrigin(scheme: .https, host: "localhost", port: upstream.port),
                    tls: UpstreamTLSSettings(caFile: paths.caBundle)
                )
            ]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        let result = try await gateway.curl(["-o", "/dev/null", "-o", "/dev/null", "http://secure.test/echo", "http://secure.test/echo"])
        #expect(result.status == 0, "\(result.stderrString)")
        let text = try await scrape(gateway)
        let labels = #"upstream="secure",endpoint="/echo",method="GET""#
        #expect(sample(text, "gateway_requests_total{\(labels),status_class=\"2xx\"}") == 2, "\(text)")
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(labels),phase=\"tls\"}") == 1)
        #expect(sample(text, "gateway_upstream_phase_seconds_count{\(labels),phase=\"connect\"}") == 1)
        let tlsSum = try #require(sample(text, "gateway_upstream_phase_seconds_sum{\(labels),phase=\"tls\"}"))
        #expect(tlsSum > 0)
    }

    @Test func failedConnectCountsAsAnError() async throws {
        // A port nobody listens on: start an upstream, note its port, stop it.
        let gone = try await TestUpstream.start()
        let port = gone.port
        try await gone.shutdown()
        let gateway = try await GatewayHarness.start { config in
            config.upstreams = [
                UpstreamConfig(name: "down", hosts: [HostPattern("down.test")!], origin: UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: port))
            ]
        }
        defer { Task { try? await gateway.stop() } }

        let result = try await gateway.curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://down.test/orders/12345"])
        #expect(result.stdoutString == "502")
        let text = try await scrape(gateway)
        let labels = #"upstream="down",endpoint="/orders/{id}",method="GET""#
        #expect(sample(text, "gateway_requests_total{\(labels),status_class=\"error\"}") == 1, "\(text)")
        #expect(sample(text, "gateway_request_errors_total{\(labels),code=\"connect_failed\"}") == 1)
        #expect(sample(text, "gateway_upstream_attempts_total{\(labels),status_class=\"error\"}") == 1)
        #expect(sample(text, "gateway_request_duration_seconds_count{\(labels)}") == 1)

        let stats = try StatsReport.decode(try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/stats"]).stdout)
        #expect(stats.endpoints.first?.errorPct == 100)
    }

    @Test func statsReportsExactPercentilesAndTheCLIPrintsThem() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { $0.upstreams = [apiUpstream(upstream)] }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }

        // A known distribution: 10, 20, …, 200 ms (one curl, keep-alive).
        let delays = (1...20).map { $0 * 10 }
        let urls = delays.map { "http://api.test/delay/\($0)" }
        let outputs = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
        let result = try await gateway.curl(outputs + urls, timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderrString)")
        _ = try await gateway.curl(["-o", "/dev/null", "http://api.test/users/7"])

        let body = try await ProcessRunner.run("curl", ["-sS", "\(gateway.adminURL)/stats"]).stdout
        let report = try StatsReport.decode(body)
        #expect(report.windowSeconds == 300)
        let delay = try #require(report.endpoints.first { $0.endpoint == "/delay/{id}" }, "\(String(decoding: body, as: UTF8.self))")
        #expect(delay.upstream == "api" && delay.method == "GET")
        #expect(delay.count == 20)
        #expect(delay.errorPct == 0)
        #expect(delay.retries == 0)
        // p50 is the 10th value (100 ms), p95 the 19th (190 ms), p99 and max the 20th (200 ms),
        // each plus the gateway's and the upstream's own overhead (generous upper
        // bounds: other suites load both cores while this runs).
        #expect(delay.p50Ms >= 99 && delay.p50Ms < 400, "\(delay)")
        #expect(delay.p95Ms >= 188 && delay.p95Ms < 600, "\(delay)")
        #expect(delay.p99Ms >= 198 && delay.p99Ms < 800, "\(delay)")
        #expect(delay.maxMs >= 200 && delay.maxMs < 1000, "\(delay)")
        #expect(delay.p50Ms <= delay.p95Ms && delay.p95Ms <= delay.p99Ms && delay.p99Ms <= delay.maxMs)
        #expect(report.endpoints.first == delay, "sorted by p95, slowest first")
        #expect(report.endpoints.contains { $0.endpoint == "/users/{id}" && $0.count == 1 })

        let cli = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["stats", "--admin", gateway.adminURL, "--sort", "count"])
        #expect(cli.status == 0, "\(cli.stderrString)")
        let lines = cli.stdoutString.split(separator: "\n")
        #expect(lines.first?.contains("2 endpoints, 21 requests, sorted by count") == true, "\(cli.stdoutString)")
        #expect(lines.contains { $0.hasPrefix("UPSTREAM") && $0.contains("P95") && $0.contains("RETRIES") })
        #expect(lines.contains { $0.hasPrefix("api") && $0.contains("/delay/{id}") && $0.contains(" 20 ") })

        let unreachable = try await ProcessRunner.run(GatewayProcess.executableURL.path, ["stats", "--admin", "http://127.0.0.1:1"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderrString.contains("cannot connect"))
    }

    @Test func adminPageIsSelfContained() async throws {
        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let result = try await ProcessRunner.run("curl", ["-sS", "-i", "\(gateway.adminURL)/"])
        let response = try #require(RawResponse(result.stdout))
        #expect(response.status == 200)
        #expect(response.header("Content-Type")?.hasPrefix("text/html") == true)
        let html = String(decoding: response.body, as: UTF8.self)
        #expect(html.contains("fetch(\"/stats\""))
        #expect(html.contains("<svg"))
        for external in ["src=\"http", "href=\"http", "<link", "@import", "url(", "<script src"] {
            #expect(!html.contains(external), "no external asset: \(external)")
        }
    }

    @Test func endpointBudgetHoldsThroughTheGateway() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.metrics.maxEndpointsPerUpstream = 5
            config.upstreams = [apiUpstream(upstream, endpoints: [])]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let urls = (0..<30).map { "http://api.test/custom/path\(String(UnicodeScalar(UInt8(97 + $0 % 26))))x\($0 / 26 == 0 ? "" : "z")" }
        let outputs = Array(repeating: ["-o", "/dev/null"], count: urls.count).flatMap { $0 }
        _ = try await gateway.curl(outputs + urls)
        let text = try await scrape(gateway)
        let endpoints = Set(text.split(separator: "\n").filter { $0.hasPrefix("gateway_requests_total{upstream=\"api\"") }.compactMap { line -> Substring? in
            guard let start = line.range(of: "endpoint=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else { return nil }
            return line[start..<end]
        })
        #expect(endpoints.count == 6, "\(endpoints)")
        #expect(endpoints.contains("other"))
        let other = #"gateway_requests_total{upstream="api",endpoint="other",method="GET",status_class="#
        let otherCount = text.split(separator: "\n").filter { $0.hasPrefix(other) }.compactMap { Double($0.split(separator: " ").last!) }.reduce(0, +)
        #expect(otherCount == 25)
    }

    @Test func dashboardUsesOnlyExportedMetrics() async throws {
        let dashboardURL = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("dashboards/gateway.json")
        let data = try Data(contentsOf: dashboardURL)
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        // The datasource is an input, and the template variables exist.
        let inputs = try #require(dashboard["__inputs"] as? [[String: Any]])
        #expect(inputs.contains { $0["name"] as? String == "DS_PROMETHEUS" && $0["pluginId"] as? String == "prometheus" })
        let variables = ((dashboard["templating"] as? [String: Any])?["list"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(variables).isSuperset(of: ["upstream", "endpoint"]))

        var expressions: [String] = []
        func collect(_ value: Any) {
            if let object = value as? [String: Any] {
                for (key, child) in object {
                    if key == "expr" || key == "definition", let text = child as? String { expressions.append(text) }
                    collect(child)
                }
            } else if let array = value as? [Any] {
                array.forEach(collect)
            }
        }
        collect(dashboard)
        #expect(expressions.count >= 15)
        #expect(expressions.contains { $0.contains("histogram_quantile(0.95") && $0.contains("gateway_request_duration_seconds_bucket") })

        let pattern = try NSRegularExpression(pattern: "gateway_[a-z_]+")
        var names = Set<String>()
        for expression in expressions {
            for match in pattern.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
                var name = String(expression[Range(match.range, in: expression)!])
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                    name = String(name.dropLast(suffix.count))
                }
                names.insert(name)
            }
        }
        #expect(names.count >= 12, "\(names.sorted())")

        let gateway = try await GatewayHarness.start()
        defer { Task { try? await gateway.stop() } }
        let text = try await scrape(gateway)
        for name in names.sorted() {
            #expect(text.contains("# TYPE \(name) "), "the dashboard uses \(name), which the gateway does not export")
        }
        // And every exported family is on the dashboard.
        for family in MetricFamily.all {
            #expect(names.contains(family.name), "\(family.name) is exported but not on the dashboard")
        }
    }

    @Test func expositionIsValidPrometheusText() async throws {
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { $0.upstreams = [apiUpstream(upstream)] }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        _ = try await gateway.curl(["-o", "/dev/null", "-o", "/dev/null", "http://api.test/users/1", "http://api.test/status/500"])
        gateway.app.metrics.retry(upstream: "api", reason: "connect_failed")
        gateway.app.metrics.tokenRefresh(upstream: "api", trigger: "unauthorized", result: "success")
        gateway.app.metrics.rateLimited(upstream: "api", source: "upstream")
        gateway.app.metrics.queueDepth(upstream: "api", depth: 0)
        let text = try await scrape(gateway)

        let problems = PrometheusTextChecker.check(text)
        #expect(problems.isEmpty, "\(problems)\n\(text)")

        if which("promtool") != nil {
            let promtool = try await ProcessRunner.run("promtool", ["check", "metrics"], stdin: Array(text.utf8))
            #expect(promtool.status == 0, "promtool: \(promtool.stdoutString)\(promtool.stderrString)")
        }
    }
}

/// A strict reader of the Prometheus text format 0.0.4, for when promtool is
/// not installed: every line is a comment, HELP, TYPE or a well-formed sample;
/// each family is announced once, before its samples, and its samples are
/// contiguous; histogram buckets are cumulative and end with `+Inf` = `_count`.
enum PrometheusTextChecker {
    static func check(_ text: String) -> [String] {
        var problems: [String] = []
        var types: [String: String] = [:]
        var helps = Set<String>()
        var finishedFamilies = Set<String>()
        var currentFamily: String?
        var buckets: [String: [(le: Double, count: Double)]] = [:]
        var counts: [String: Double] = [:]
        var seriesSeen = Set<String>()
        guard text.hasSuffix("\n") else { return ["the exposition must end with a newline"] }

        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if line.hasPrefix("# HELP ") || line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
                guard parts.count >= 3, isMetricName(parts[2]) else { problems.append("bad metadata: \(line)"); continue }
                let name = String(parts[2])
                if line.hasPrefix("# HELP ") {
                    if !helps.insert(name).inserted { problems.append("HELP twice for \(name)") }
                } else {
                    guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(parts[3]) else {
                        problems.append("bad TYPE: \(line)"); continue
                    }
                    if types[name] != nil { problems.append("TYPE twice for \(name)") }
                    types[name] = String(parts[3])
                }
                if currentFamily != name, let current = currentFamily { finishedFamilies.insert(current) }
                if finishedFamilies.contains(name) { problems.append("\(name) is not contiguous") }
                currentFamily = name
                continue
            }
            if line.hasPrefix("#") || line.isEmpty { continue }
            guard let (name, labels, value) = parseSample(line) else { problems.append("bad sample: \(line)"); continue }
            var family = name
            let type = types[name]
            if type == nil {
                for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                    let base = String(name.dropLast(suffix.count))
                    if types[base] == "histogram" { family = base }
                }
            }
            guard let familyType = types[family] else { problems.append("sample before TYPE: \(line)"); continue }
            if family != currentFamily { problems.append("sample of \(family) outside its family block") }
            if familyType == "counter" && value < 0 { problems.append("negative counter: \(line)") }
            if familyType == "counter" && !name.hasSuffix("_total") { problems.append("counter without _total: \(name)") }
            let seriesKey = name + "{" + labels.map { "\($0.0)=\($0.1)" }.joined(separator: ",") + "}"
            if !seriesSeen.insert(seriesKey).inserted { problems.append("duplicate series: \(seriesKey)") }
            if familyType == "histogram" {
                let rest = labels.filter { $0.0 != "le" }.map { "\($0.0)=\($0.1)" }.joined(separator: ",")
                if name.hasSuffix("_bucket") {
                    guard let le = labels.first(where: { $0.0 == "le" })?.1 else { problems.append("bucket without le: \(line)"); continue }
                    let bound = le == "+Inf" ? Double.infinity : Double(le)
                    guard let bound else { problems.append("bad le: \(line)"); continue }
                    buckets[family + "{" + rest + "}", default: []].append((bound, value))
                } else if name.hasSuffix("_count") {
                    counts[family + "{" + rest + "}"] = value
                }
            }
        }
        for (series, list) in buckets {
            if list.last?.le != .infinity { problems.append("\(series): the last bucket must be +Inf") }
            for (a, b) in zip(list, list.dropFirst()) where !(a.le < b.le && a.count <= b.count) {
                problems.append("\(series): buckets must be increasing and cumulative")
            }
            if let count = counts[series], count != list.last?.count { problems.append("\(series): +Inf bucket != _count") }
        }
        return problems
    }

    static func isMetricName(_ name: Substring) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" || $0 == ":" }
    }

    /// `name{a="x",b="y"} value`: name, labels (values unescaped), value.
    static func parseSample(_ line: Substring) -> (String, [(String, String)], Double)? {
        var index = line.startIndex
        while index < line.endIndex, line[index] != "{", line[index] != " " { index = line.index(after: index) }
        let name = line[line.startIndex..<index]
        guard isMetricName(name), index < line.endIndex else { return nil }
        var labels: [(String, String)] = []
        if line[index] == "{" {
            index = line.index(after: index)
            while index < line.endIndex, line[index] != "}" {
                var labelEnd = index
                while labelEnd < line.endIndex, line[labelEnd] != "=" { labelEnd = line.index(after: labelEnd) }
                let label = line[index..<labelEnd]
                guard isMetricName(label), !label.contains(":"), labelEnd < line.endIndex else { return nil }
                var cursor = line.index(after: labelEnd)
                guard cursor < line.endIndex, line[cursor] == "\"" else { return nil }
                cursor = line.index(after: cursor)
                var value = ""
                while cursor < line.endIndex, line[cursor] != "\"" {
                    if line[cursor] == "\\" {
                        cursor = line.index(after: cursor)
                        guard cursor < line.endIndex else { return nil }
                        switch line[cursor] {
                        case "\\": value.append("\\")
                        case "\"": value.append("\"")
                        case "n": value.append("\n")
                        default: return nil
                        }
                    } else {
                        value.append(line[cursor])
                    }
                    cursor = line.index(after: cursor)
                }
                guard cursor < line.endIndex else { return nil }
                if labels.contains(where: { $0.0 == label }) { return nil }
                labels.append((String(label), value))
                cursor = line.index(after: cursor)
                if cursor < line.endIndex, line[cursor] == "," { cursor = line.index(after: cursor) }
                index = cursor
            }
            guard index < line.endIndex else { return nil }
            index = line.index(after: index)
        }
        guard index < line.endIndex, line[index] == " " else { return nil }
        let rest = line[line.index(after: index)...].split(separator: " ")
        guard rest.count == 1 || rest.count == 2 else { return nil }
        let valueText = rest[0]
        let value: Double? = switch valueText {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(valueText)
        }
        guard let value else { return nil }
        if rest.count == 2, Int64(rest[1]) == nil { return nil }
        return (String(name), labels, value)
    }
}

/// The cost of metrics per request, run by hand: `GATEWAY_BENCH=1 swift test --filter MetricsCostBenchmark`.
/// Prints requests/s through the live gateway (wrk, keep-alive, 1 KiB bodies)
/// with `MetricsPolicy` in the chain and without, alternating, and the
/// policy's own cost per request in a tight loop.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["GATEWAY_BENCH"] != nil), .timeLimit(.minutes(5)))
struct MetricsCostBenchmark {
    @Test func throughputWithAndWithoutMetrics() async throws {
        let wrk = try #require(which("wrk"), "wrk is not installed")
        // GATEWAY_BENCH_ORIGIN=http://127.0.0.1:PORT (e.g. nginx serving /1k) keeps the origin out of this process.
        let environment = ProcessInfo.processInfo.environment
        let upstream = try await TestUpstream.start()
        let origin = environment["GATEWAY_BENCH_ORIGIN"].flatMap(UpstreamOrigin.init) ?? UpstreamOrigin(scheme: .http, host: "127.0.0.1", port: upstream.port)
        let path = environment["GATEWAY_BENCH_ORIGIN"] == nil ? "/bytes/1024" : (environment["GATEWAY_BENCH_PATH"] ?? "/1k")
        let gateway = try await GatewayHarness.start { config in
            config.logLevel = .warning
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], origin: origin)]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown() } }
        let config = gateway.app.liveConfig.current.config
        let metricsPolicy = MetricsPolicy(metrics: gateway.app.metrics, config: config)
        let pool = gateway.app.pool
        let withMetrics = ClosureProxyHandler { request, context in
            try await metricsPolicy.handle(request, context: context, next: pool)
        }
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-bench-\(UUID().uuidString).lua")
        try """
            local req = wrk.format("GET", "http://api.test\(path)", {Host="api.test"})
            request = function() return req end
            """.write(to: script, atomically: true, encoding: .utf8)
        let seconds = Int(ProcessInfo.processInfo.environment["GATEWAY_BENCH_SECONDS"] ?? "5") ?? 5
        var results: [String: [Double]] = [:]
        for round in 0..<4 {
            let on = round % 2 == 0
            gateway.app.liveConfig.replace(with: ActiveConfig(config: config, handler: on ? withMetrics : pool))
            let cpuBefore = Self.processCPUSeconds()
            let run = try await ProcessRunner.run(
                "taskset", ["-c", "0", wrk, "-t1", "-c50", "-d\(seconds)s", "-s", script.path, gateway.proxyURL],
                timeout: .seconds(seconds + 30)
            )
            let line = run.stdoutString.split(separator: "\n").first { $0.hasPrefix("Requests/sec:") }
            let rps = Double(line?.split(separator: " ").last ?? "") ?? 0
            #expect(!run.stdoutString.contains("Non-2xx"), "\(run.stdoutString)")
            let requests = Double(run.stdoutString.split(separator: "\n").first { $0.contains("requests in") }?
                .split(separator: " ").first ?? "") ?? 0
            let cpuMicros = requests > 0 ? (Self.processCPUSeconds() - cpuBefore) / requests * 1e6 : 0
            results[on ? "metrics on" : "metrics off", default: []].append(rps)
            print("bench round \(round): \(on ? "metrics on " : "metrics off") \(rps) req/s, \(Int(requests)) requests, gateway process CPU \(String(format: "%.1f", cpuMicros)) µs/request")
        }
        for (name, values) in results.sorted(by: { $0.key < $1.key }) {
            print("bench \(name): \(values.map { String(Int($0)) }.joined(separator: " / ")) req/s")
        }
    }

    /// User + system CPU seconds of this process (the in-process gateway, with wrk and the origin outside it).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    @Test func policyCostPerRequest() async throws {
        let metrics = GatewayMetrics()
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], endpoints: [EndpointTemplate("GET /users/{id}")!])]
        let policy = MetricsPolicy(metrics: metrics, config: config)
        let terminal = ClosureProxyHandler { _, context in
            let start = ContinuousClock.now
            var timings = AttemptTimings(started: start, reusedConnection: true)
            timings.responseHead = start
            timings.status = 200
            timings.end = start
            _ = context.record.beginAttempt(timings)
            return ProxyResponse(status: .ok, body: .stream(OneChunk(), declaredLength: 5))
        }
        let logger = Logger(label: "bench")
        let iterations = 200_000
        let paths = (0..<50).map { "/users/\($0)/items/\($0 * 7)?q=\($0)" }
        func run(_ useMetrics: Bool) async throws -> Duration {
            let clock = ContinuousClock()
            return try await clock.measure {
                for i in 0..<iterations {
                    let request = ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: paths[i % paths.count], headers: [:], upstreamName: "api")
                    let context = RequestContext(id: "b", clientAddress: "127.0.0.1:1", logger: logger)
                    let response = useMetrics
                        ? try await policy.handle(request, context: context, next: terminal)
                        : try await terminal.handle(request, context: context)
                    try await response.body.forEachChunk { _ in }
                }
            }
        }
        _ = try await run(true)  // warm up: make the handles
        let off = try await run(false)
        let on = try await run(true)
        let perRequest = (on - off) / iterations
        print("bench policy: \(iterations) requests, without metrics \(off), with \(on): metrics cost \(perRequest) per request")
    }
}

/// A one-chunk streamed body.
private final class OneChunk: BodySource {
    private let done = NIOLockedValueBox(false)
    func next() async throws -> ByteBuffer? {
        done.withLockedValue { d in
            defer { d = true }
            return d ? nil : ByteBuffer(string: "hello")
        }
    }
    func cancel() {}
}
