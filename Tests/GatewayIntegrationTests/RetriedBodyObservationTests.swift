import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import GatewayTesting
import Testing

/// A POST with `Idempotency-Key` and a body, answered 503 then 200, through
/// the running gateway with traces on: the upstream gets the same body twice,
/// and the one trace record and the metrics show both attempts.
@Suite(.timeLimit(.minutes(2)))
struct RetriedBodyObservationTests {
    @Test func aRetriedPostShowsBothAttemptsInItsTraceAndMetrics() async throws {
        let upstream = try await TestUpstream.start()
        let dir = try TraceTests.tempDir()
        let gateway = try await GatewayHarness.start { config in
            config.debug = true
            config.trace = TraceConfig(file: "\(dir)/trace.jsonl")
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!], retry: RetryAndRateLimitTests.fastRetry)]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); try? FileManager.default.removeItem(atPath: dir) } }
        _ = RetryAndRateLimitTests.failing(upstream, times: 1)

        let body = "order=42&note=twice"
        let result = try await gateway.curl(["-w", "%{http_code}", "-H", "Idempotency-Key: k-42", "--data-binary", body, upstream.url("/custom/orders")])
        #expect(result.stdoutString == "ok\n200")
        #expect(upstream.receivedRequests.map { String(decoding: $0.body, as: UTF8.self) } == [body, body])

        let record = try #require(try await TraceTests.readRecords("\(dir)/trace.jsonl", count: 1).first)
        #expect(record.attempts.map(\.status) == [503, 200], "one record, each attempt in it")
        #expect(record.status == 200)
        #expect(record.requestBytes == body.utf8.count, "the body is traced once")

        let metrics = try await OAuthTests.metrics(gateway).split(separator: "\n").filter { $0.contains(#"upstream="api""#) }
        let attempts = metrics.filter { $0.hasPrefix("gateway_upstream_attempts_total{") }
        #expect(attempts.contains { $0.contains(#"status_class="5xx""#) && $0.hasSuffix(" 1") }, "\(attempts)")
        #expect(attempts.contains { $0.contains(#"status_class="2xx""#) && $0.hasSuffix(" 1") }, "\(attempts)")
        #expect(metrics.contains { $0.hasPrefix("gateway_retries_total{") && $0.contains(#"reason="status_503""#) && $0.hasSuffix(" 1") }, "\(metrics)")
    }
}
