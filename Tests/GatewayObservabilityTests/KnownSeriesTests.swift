import GatewayConfig
import GatewayCore
import Logging
import Testing
@testable import GatewayObservability

/// Series whose label sets the config fixes are in the exposition at 0 before
/// any event (dashboards read 0, not "No data"), and again for the upstreams
/// a reload adds, without resetting the ones already counting.
@Suite(.timeLimit(.minutes(1)))
struct KnownSeriesTests {
    func scrape(_ metrics: GatewayMetrics) -> String {
        String(decoding: metrics.exposition(), as: UTF8.self)
    }

    func lines(_ text: String) -> Set<Substring> {
        Set(text.split(separator: "\n"))
    }

    /// `payments`: every feature whose label sets are known; `plain`: none.
    func config(extra: [UpstreamConfig] = []) -> GatewayConfig {
        var config = GatewayConfig()
        let oauth = OAuth2Config(
            grant: .clientCredentials, tokenURL: "https://auth.test/token",
            clientID: Secret(source: .env("CLIENT_ID"), value: "id"), clientSecret: Secret(source: .env("CLIENT_SECRET"), value: "secret")
        )
        config.upstreams = [
            UpstreamConfig(
                name: "payments", hosts: [HostPattern("pay.test")!],
                tls: UpstreamTLSSettings(pins: [SPKIPin(digest: Array(repeating: 7, count: 32))], pinMode: .report),
                endpoints: [EndpointTemplate("GET /charges/{id}")!, EndpointTemplate("/health")!],
                auth: AuthConfig(kind: .oauth2(oauth)),
                retry: RetryConfig(on: [.connectFailure, .reset, .status(503)]),
                rateLimit: RateLimitConfig(requestsPerSecond: 10)
            ),
            UpstreamConfig(name: "plain", hosts: [HostPattern("plain.test")!]),
        ] + extra
        return config
    }

    @Test func knownLabelSetsStartAtZero() {
        let metrics = GatewayMetrics()
        _ = MetricsObserver(metrics: metrics, config: config())
        let text = scrape(metrics)
        let samples = lines(text)
        for reason in ["connect_failed", "dns_failure", "connect_timeout", "connection_reset", "status_503"] {
            #expect(samples.contains("gateway_retries_total{upstream=\"payments\",reason=\"\(reason)\"} 0"), "\(reason)\n\(text)")
        }
        for trigger in ["first_use", "expiry", "401"] {
            for result in ["success", "failure"] {
                #expect(samples.contains("gateway_token_refreshes_total{upstream=\"payments\",trigger=\"\(trigger)\",result=\"\(result)\"} 0"))
            }
        }
        #expect(!text.contains("result=\"shared\""), "no shared results without shared_state")
        #expect(samples.contains(#"gateway_rate_limited_total{upstream="payments",source="local"} 0"#))
        #expect(samples.contains(#"gateway_rate_limited_total{upstream="payments",source="upstream"} 0"#))
        #expect(samples.contains(#"gateway_queued_requests{upstream="payments"} 0.0"#))
        #expect(samples.contains(#"gateway_pin_failures_total{upstream="payments",mode="report"} 0"#))
        // A template with its method: its requests (every class) and its duration.
        let charges = #"upstream="payments",endpoint="/charges/{id}",method="GET""#
        for statusClass in StatusClass.allCases {
            #expect(samples.contains("gateway_requests_total{\(charges),status_class=\"\(statusClass.label)\"} 0"), "\(statusClass.label)")
        }
        #expect(samples.contains("gateway_request_duration_seconds_count{\(charges)} 0"))
        #expect(samples.contains("gateway_request_duration_seconds_bucket{\(charges),le=\"+Inf\"} 0"))
        #expect(!text.contains("endpoint=\"/health\""), "a template for any method names no method to start")
        // Nothing configured, nothing started.
        for family in ["gateway_retries_total", "gateway_token_refreshes_total", "gateway_rate_limited_total", "gateway_pin_failures_total"] {
            #expect(!text.contains("\(family){upstream=\"plain\""), "\(family)")
        }
    }

    @Test func aReloadStartsNewUpstreamsAndKeepsCounts() {
        let metrics = GatewayMetrics()
        _ = MetricsObserver(metrics: metrics, config: config())
        metrics.retry(upstream: "payments", reason: "status_503")
        let added = UpstreamConfig(name: "orders", hosts: [HostPattern("orders.test")!], retry: RetryConfig(on: [.timeout]))
        _ = MetricsObserver(metrics: metrics, config: config(extra: [added]))
        let samples = lines(scrape(metrics))
        #expect(samples.contains(#"gateway_retries_total{upstream="payments",reason="status_503"} 1"#), "the reload resets nothing")
        #expect(samples.contains(#"gateway_retries_total{upstream="orders",reason="request_timeout"} 0"#))
        #expect(samples.contains(#"gateway_retries_total{upstream="orders",reason="connect_timeout"} 0"#))
    }

    /// An endpoint met at run time starts every status class at 0 with its first request.
    @Test func aNewEndpointStartsEveryStatusClass() {
        let metrics = GatewayMetrics()
        let recorder = metrics.endpoint(upstream: "plain", method: "GET", endpoint: "/orders/{id}", configured: false, maxEndpoints: 10)
        recorder.record(CompletedExchange(duration: .milliseconds(20), statusClass: .success, attempts: AttemptList()), at: .now)
        let samples = lines(scrape(metrics))
        let labels = #"upstream="plain",endpoint="/orders/{id}",method="GET""#
        #expect(samples.contains("gateway_requests_total{\(labels),status_class=\"2xx\"} 1"))
        #expect(samples.contains("gateway_requests_total{\(labels),status_class=\"5xx\"} 0"))
        #expect(samples.contains("gateway_requests_total{\(labels),status_class=\"error\"} 0"))
    }

    /// With `shared_state`, a refresh may adopt another replica's token: `result="shared"`.
    @Test func sharedStateAddsSharedResults() {
        var withShared = config()
        let endpoint = PostgresURL(host: "127.0.0.1", username: "gw")
        withShared.sharedState = SharedStateConfig(postgres: PostgresStateConfig(url: Secret(source: .env("GATEWAY_DATABASE_URL"), value: "postgres://gw@127.0.0.1/gw"), endpoint: endpoint))
        let metrics = GatewayMetrics()
        _ = MetricsObserver(metrics: metrics, config: withShared)
        #expect(scrape(metrics).contains(#"gateway_token_refreshes_total{upstream="payments",trigger="first_use",result="shared"} 0"#))
    }
}
