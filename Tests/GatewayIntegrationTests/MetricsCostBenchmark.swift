import Foundation
import GatewayConfig
import GatewayCore
import GatewayListener
import GatewayObservability
import GatewayTesting
import Logging
import NIOCore
import Testing

/// The cost of metrics per request, run by hand: `GATEWAY_BENCH=1 swift test --filter MetricsCostBenchmark`.
/// Prints requests/s through the live gateway (wrk, keep-alive, 1 KiB bodies)
/// with `MetricsObserver` observing and without, alternating, and the
/// observer's own cost per request in a tight loop.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["GATEWAY_BENCH"] != nil), .timeLimit(.minutes(5)))
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
        let admission = gateway.app.liveConfig.current.admission
        let metricsObserver = MetricsObserver(metrics: gateway.app.metrics, config: config)
        let pool = gateway.app.pool
        let withMetrics = RouteTable(byUpstream: [:], unconfigured: UpstreamRoute(observers: [metricsObserver]))
        let without = RouteTable(byUpstream: [:], unconfigured: UpstreamRoute(observers: []))
        let script = URL(fileURLWithPath: TestScratch.path("gateway-bench", suffix: ".lua"))
        try """
            local req = wrk.format("GET", "http://api.test\(path)", {Host="api.test"})
            request = function() return req end
            """.write(to: script, atomically: true, encoding: .utf8)
        let seconds = Int(ProcessInfo.processInfo.environment["GATEWAY_BENCH_SECONDS"] ?? "5") ?? 5
        var results: [String: [Double]] = [:]
        for round in 0..<4 {
            let on = round % 2 == 0
            gateway.app.liveConfig.replace(with: ActiveConfig(config: config, admission: admission, routes: on ? withMetrics : without, transport: pool))
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

    @Test func observerCostPerRequest() {
        let metrics = GatewayMetrics()
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], endpoints: [EndpointTemplate("GET /users/{id}")!])]
        let observer = MetricsObserver(metrics: metrics, config: config)
        /// What the pool records for one attempt.
        func attempt(_ context: RequestContext) {
            let start = ContinuousClock.now
            var timings = AttemptTimings(started: start, reusedConnection: true)
            timings.responseHead = start
            timings.status = 200
            timings.end = start
            _ = context.record.beginAttempt(timings)
        }
        let logger = Logger(label: "bench")
        let iterations = 200_000
        let paths = (0..<50).map { "/users/\($0)/items/\($0 * 7)?q=\($0)" }
        func run(_ useMetrics: Bool) -> Duration {
            ContinuousClock().measure {
                for i in 0..<iterations {
                    let request = ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: paths[i % paths.count], headers: [:], upstreamName: "api")
                    let context = RequestContext(id: "b", clientAddress: "127.0.0.1:1", logger: logger)
                    let observation = useMetrics ? observer.begin(request, context: context) : nil
                    attempt(context)
                    observation?.finish(ExchangeOutcome(status: 200, responseBytes: 5, error: nil))
                }
            }
        }
        _ = run(true)  // warm up: make the handles
        let off = run(false)
        let on = run(true)
        let perRequest = (on - off) / iterations
        print("bench observer: \(iterations) requests, without metrics \(off), with \(on): metrics cost \(perRequest) per request")
    }
}
