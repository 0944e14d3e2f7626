import GatewayConfig
import GatewayCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

/// A streamed body of `chunks` chunks, optionally failing after them.
final class ChunkSource: BodySource {
    private let state: NIOLockedValueBox<(left: Int, cancelled: Bool)>
    private let failure: GatewayError?

    init(chunks: Int, failure: GatewayError? = nil) {
        state = NIOLockedValueBox((chunks, false))
        self.failure = failure
    }

    var cancelled: Bool { state.withLockedValue { $0.cancelled } }

    func next() async throws -> ByteBuffer? {
        let left = state.withLockedValue { s -> Int in
            defer { s.left -= 1 }
            return s.left
        }
        if left > 0 { return ByteBuffer(string: "chunk") }
        if let failure { throw failure }
        return nil
    }

    func cancel() { state.withLockedValue { $0.cancelled = true } }
}

@Suite(.timeLimit(.minutes(1)))
struct MetricsPolicyTests {
    let logger = Logger(label: "test")

    func config() -> GatewayConfig {
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!], endpoints: [EndpointTemplate("GET /users/{id}")!])]
        return config
    }

    func request(_ target: String) -> ProxyRequest {
        ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: target, headers: [:], upstreamName: "api")
    }

    /// A terminal that records attempts like the pool: the first on a new connection, the rest reused.
    func upstream(status: HTTPResponseStatus, body: ProxyBody, attempts: Int = 1) -> ClosureProxyHandler {
        ClosureProxyHandler { _, context in
            for i in 0..<attempts {
                let start = ContinuousClock.now
                var timings = AttemptTimings(started: start, reusedConnection: i > 0)
                if i == 0 {
                    timings.connectStart = start
                    timings.connectEnd = start + .milliseconds(2)
                }
                timings.responseHead = start + .milliseconds(5)
                timings.status = i == attempts - 1 ? Int(status.code) : 503
                timings.end = start + .milliseconds(6)
                _ = context.record.beginAttempt(timings)
            }
            return ProxyResponse(status: status, body: body)
        }
    }

    func scrape(_ metrics: GatewayMetrics) -> String {
        String(decoding: metrics.exposition(), as: UTF8.self)
    }

    @Test func streamedResponseIsRecordedWhenTheBodyEnds() async throws {
        let metrics = GatewayMetrics()
        let policy = MetricsPolicy(metrics: metrics, config: config())
        let source = ChunkSource(chunks: 3)
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        let response = try await policy.handle(request("/users/42?x=1"), context: context, next: upstream(status: .ok, body: .stream(source, declaredLength: nil), attempts: 2))
        let labels = #"upstream="api",endpoint="/users/{id}",method="GET""#
        #expect(!scrape(metrics).contains("gateway_requests_total{\(labels),status_class=\"2xx\"}"), "not before the body ends")
        var chunks = 0
        try await response.body.forEachChunk { _ in chunks += 1 }
        #expect(chunks == 3)
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

    @Test func thrownErrorsCountAsErrorWithTheirCode() async throws {
        let metrics = GatewayMetrics()
        let policy = MetricsPolicy(metrics: metrics, config: config())
        let failing = ClosureProxyHandler { _, context in
            var timings = AttemptTimings(started: .now)
            timings.end = .now
            timings.errorCode = .connectFailed
            _ = context.record.beginAttempt(timings)
            throw GatewayError(.connectFailed, "refused")
        }
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        await #expect(throws: GatewayError.self) {
            _ = try await policy.handle(request("/other/7"), context: context, next: failing)
        }
        let text = scrape(metrics)
        let labels = #"upstream="api",endpoint="/other/{id}",method="GET""#
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"error\"} 1"), "\(text)")
        #expect(text.contains("gateway_request_errors_total{\(labels),code=\"connect_failed\"} 1"))
        #expect(text.contains("gateway_upstream_attempts_total{\(labels),status_class=\"error\"} 1"))
        #expect(metrics.statsReport().endpoints.first?.errorPct == 100)
    }

    @Test func bodyFailureAndCancellationAreRecordedOnce() async throws {
        let metrics = GatewayMetrics()
        let policy = MetricsPolicy(metrics: metrics, config: config())
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        let broken = try await policy.handle(
            request("/users/1"), context: context,
            next: upstream(status: .ok, body: .stream(ChunkSource(chunks: 1, failure: GatewayError(.connectionReset, "reset")), declaredLength: nil))
        )
        await #expect(throws: GatewayError.self) { try await broken.body.forEachChunk { _ in } }

        let source = ChunkSource(chunks: 5)
        let context2 = RequestContext(id: "2", clientAddress: "127.0.0.1:1", logger: logger)
        let abandoned = try await policy.handle(request("/users/2"), context: context2, next: upstream(status: .notFound, body: .stream(source, declaredLength: nil)))
        abandoned.body.discard()
        abandoned.body.discard()
        #expect(source.cancelled)

        let text = scrape(metrics)
        let labels = #"upstream="api",endpoint="/users/{id}",method="GET""#
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"error\"} 1"), "\(text)")
        #expect(text.contains("gateway_request_errors_total{\(labels),code=\"connection_reset\"} 1"))
        #expect(text.contains("gateway_requests_total{\(labels),status_class=\"4xx\"} 1"))
        #expect(text.contains("gateway_request_duration_seconds_count{\(labels)} 2"))
    }

    @Test func bufferedResponsesAreRecordedAtOnce() async throws {
        let metrics = GatewayMetrics()
        let policy = MetricsPolicy(metrics: metrics, config: config())
        let context = RequestContext(id: "1", clientAddress: "127.0.0.1:1", logger: logger)
        _ = try await policy.handle(request("/"), context: context, next: upstream(status: .noContent, body: .empty))
        _ = try await policy.handle(request("/"), context: context, next: upstream(status: .ok, body: .bytes(ByteBuffer(string: "hi"))))
        #expect(scrape(metrics).contains(#"gateway_requests_total{upstream="api",endpoint="/",method="GET",status_class="2xx"} 2"#))
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
