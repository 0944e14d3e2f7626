import GatewayConfig
import GatewayCore
import Logging
import NIOCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

@Suite(.timeLimit(.minutes(1)))
struct MetricsObserverTests {
    let logger = Logger(label: "test")

    func config() -> GatewayConfig {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], endpoints: [EndpointTemplate("GET /users/{id}")!])]
        return config
    }

    func request(_ target: String) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: target, headers: [:], upstreamName: "api")
    }

    /// Records attempts in `context` as the pool does: the first on a new
    /// connection, the rest reused; the last answers `status`, the others 503.
    func recordAttempts(_ count: Int, status: HTTPResponseStatus, in context: RequestContext) {
        for i in 0..<count {
            let start = ContinuousClock.now
            var timings = AttemptTimings(started: start, reusedConnection: i > 0)
            if i == 0 {
                timings.connectStart = start
                timings.connectEnd = start + .milliseconds(2)
            }
            timings.responseHead = start + .milliseconds(5)
            timings.status = i == count - 1 ? Int(status.code) : 503
            timings.end = start + .milliseconds(6)
            _ = context.record.beginAttempt(timings)
        }
    }

    func scrape(_ metrics: GatewayMetrics) -> String {
        String(decoding: metrics.exposition(), as: UTF8.self)
    }

    /// Spans dropped add up by reason, each reason one series (the counter
    /// looked up again, not made again, on each drop).
    @Test func droppedSpansAddUpByReason() {
        let metrics = GatewayMetrics()
        metrics.traceSpansDropped(reason: "queue_full", count: 2)
        metrics.traceSpansDropped(reason: "queue_full", count: 3)
        metrics.traceSpansDropped(reason: "export_failed", count: 4)
        metrics.traceSpansDropped(reason: "export_failed", count: 0)
        let text = scrape(metrics)
        #expect(text.contains(#"gateway_trace_spans_dropped_total{reason="queue_full"} 5"#), "\(text)")
        #expect(text.contains(#"gateway_trace_spans_dropped_total{reason="export_failed"} 4"#))
    }

    @Test func anExchangeIsRecordedWhenItFinishes() throws {
        let metrics = GatewayMetrics()
        let observer = MetricsObserver(metrics: metrics, config: config())
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        let observation = observer.begin(request("/users/42?x=1"), context: context)
        recordAttempts(2, status: .ok, in: context)
        observation.requestBodyPart(ByteBuffer(string: "body"))
        let labels = #"upstream="api",endpoint="/users/{id}",method="GET""#
        #expect(scrape(metrics).contains("gateway_requests_total{\(labels),status_class=\"2xx\"} 0"), "at 0, not counted before the exchange ends")
        observation.finish(ExchangeOutcome(status: 200, responseBytes: 15, error: nil))
        let text = scrape(metrics)
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"2xx\"} 1"), "\(text)")
        #expect(text.contains("gateway_request_duration_seconds_count{\(labels)} 1"))
        #expect(text.contains("gateway_upstream_attempts_total{\(labels),status_class=\"5xx\"} 1"))
        #expect(text.contains("gateway_upstream_attempts_total{\(labels),status_class=\"2xx\"} 1"))
        #expect(text.contains("gateway_upstream_phase_seconds_count{\(labels),phase=\"connect\"} 1"), "the reused attempt has no connect phase")
        #expect(text.contains("gateway_upstream_phase_seconds_count{\(labels),phase=\"ttfb\"} 2"))
        #expect(text.contains("gateway_upstream_phase_seconds_count{\(labels),phase=\"total\"} 2"))
        #expect(!text.contains("phase=\"tls\""), "plain http has no TLS phase")
        let stats = try #require(metrics.statsReport().endpoints.first)
        #expect(stats.count == 1)
        #expect(stats.retries == 1)
    }

    @Test func aGatewayErrorCountsAsErrorWithItsCode() {
        let metrics = GatewayMetrics()
        let observer = MetricsObserver(metrics: metrics, config: config())
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        let observation = observer.begin(request("/other/7"), context: context)
        var timings = AttemptTimings(started: .now)
        timings.end = .now
        timings.errorCode = .connectFailed
        _ = context.record.beginAttempt(timings)
        observation.finish(ExchangeOutcome(status: 502, responseBytes: 0, error: .connectFailed))
        let text = scrape(metrics)
        let labels = #"upstream="api",endpoint="/other/{id}",method="GET""#
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"error\"} 1"), "\(text)")
        #expect(text.contains("gateway_request_errors_total{\(labels),code=\"connect_failed\"} 1"))
        #expect(text.contains("gateway_upstream_attempts_total{\(labels),status_class=\"error\"} 1"))
        #expect(metrics.statsReport().endpoints.first?.errorPct == 100)
    }

    @Test func aBodyCutShortIsAnErrorAndAClientLeavingKeepsTheStatus() {
        let metrics = GatewayMetrics()
        let observer = MetricsObserver(metrics: metrics, config: config())
        let broken = observer.begin(request("/users/1"), context: RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger))
        broken.finish(ExchangeOutcome(status: 200, responseBytes: 5, error: .connectionReset))
        let abandoned = observer.begin(request("/users/2"), context: RequestContext(id: "2", clientAddress: "127.0.0.1:1", logger: logger))
        abandoned.finish(ExchangeOutcome(status: 404, responseBytes: 0, error: nil, cancelled: true))
        let text = scrape(metrics)
        let labels = #"upstream="api",endpoint="/users/{id}",method="GET""#
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"error\"} 1"), "\(text)")
        #expect(text.contains("gateway_request_errors_total{\(labels),code=\"connection_reset\"} 1"))
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"4xx\"} 1"))
        #expect(text.contains("gateway_request_duration_seconds_count{\(labels)} 2"))
    }

    @Test func everyFamilyIsAnnouncedFromTheStart() {
        let text = scrape(GatewayMetrics())
        for family in MetricFamily.all {
            #expect(text.contains("# TYPE \(family.name) \(family.kind.rawValue)\n"), "\(family.name)")
            #expect(text.components(separatedBy: "# TYPE \(family.name) ").count == 2, "announced once: \(family.name)")
        }
        #expect(text.contains("gateway_build_info{version=\"\(GatewayVersion.current)\"} 1"))
    }

    @Test func eventsUseTheirFamilies() {
        let metrics = GatewayMetrics()
        metrics.retry(upstream: "api", reason: "connect_failed")
        metrics.retry(upstream: "api", reason: "connect_failed")
        metrics.tokenRefresh(upstream: "api", trigger: "unauthorized", result: "success")
        metrics.rateLimited(upstream: "api", source: "local")
        metrics.queueDepth(upstream: "api", depth: 3)
        metrics.pinFailure(host: "api.test", upstream: nil, mode: .enforce)
        let text = scrape(metrics)
        #expect(text.contains(#"gateway_retries_total{upstream="api",reason="connect_failed"} 2"#))
        #expect(text.contains(#"gateway_token_refreshes_total{upstream="api",trigger="unauthorized",result="success"} 1"#))
        #expect(text.contains(#"gateway_rate_limited_total{upstream="api",source="local"} 1"#))
        #expect(text.contains(#"gateway_queued_requests{upstream="api"} 3"#))
        #expect(text.contains(#"gateway_pin_failures_total{upstream="api.test",mode="enforce"} 1"#))
        for family in MetricFamily.all {
            #expect(text.components(separatedBy: "# TYPE \(family.name) ").count == 2, "announced once: \(family.name)")
        }
    }
}
