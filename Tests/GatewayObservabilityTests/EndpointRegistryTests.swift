import GatewayConfig
import GatewayCore
import NIOHTTP1
import Testing
@testable import GatewayObservability

@Suite(.timeLimit(.minutes(1)))
struct EndpointRegistryTests {
    func randomSegment() -> String {
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        return String((0..<Int.random(in: 3...12)).map { _ in letters.randomElement()! })
    }

    @Test func cardinalityIsCappedUnderTenThousandRandomPaths() throws {
        let metrics = GatewayMetrics()
        var config = GatewayConfig()
        config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("api.test")!])]
        let observer = MetricsObserver(metrics: metrics, config: config)
        var endpoints = Set<String>()
        for i in 0..<10_000 {
            // Letters only, so normalization cannot collapse them: 10,000 distinct templates.
            let target = "/\(randomSegment())/\(randomSegment())-\(i % 3 == 0 ? "x" : "y")\(randomSegment())?id=\(i)"
            let request = ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: target, headers: [:], upstreamName: "api")
            endpoints.insert(observer.recorder(for: request).key.endpoint)
        }
        #expect(endpoints.count == 201, "200 named endpoints plus other")
        #expect(endpoints.contains(EndpointKey.overflow))
        let exposition = String(decoding: metrics.exposition(), as: UTF8.self)
        let series = exposition.split(separator: "\n").filter { $0.hasPrefix("gateway_request_duration_seconds_count{") }
        #expect(series.count == 201)
    }

    @Test func configuredTemplatesComeFirstAndAreNeverOther() throws {
        let metrics = GatewayMetrics()
        var config = GatewayConfig()
        config.metrics.maxEndpointsPerUpstream = 2
        config.upstreams = [
            UpstreamConfig(
                name: "api", hosts: [HostPattern("api.test")!],
                endpoints: [EndpointTemplate("GET /users/{name}")!, EndpointTemplate("/health")!, EndpointTemplate("/orders/{id}/items")!]
            )
        ]
        let observer = MetricsObserver(metrics: metrics, config: config)
        func endpoint(_ method: HTTPMethod, _ target: String) -> String {
            let request = ProxyRequest(method: method, scheme: .http, host: "api.test", port: 80, target: target, headers: [:], upstreamName: "api")
            return observer.recorder(for: request).key.endpoint
        }
        // Fill the automatic budget first.
        #expect(endpoint(.GET, "/a") == "/a")
        #expect(endpoint(.GET, "/b") == "/b")
        #expect(endpoint(.GET, "/c") == "other")
        #expect(endpoint(.GET, "/users/alice") == "/users/{name}")
        #expect(endpoint(.POST, "/users/alice") == "other", "the template is for GET only")
        #expect(endpoint(.DELETE, "/health?deep=1") == "/health")
        #expect(endpoint(.GET, "/orders/9/items") == "/orders/{id}/items")
        #expect(endpoint(.GET, "/a") == "/a", "known endpoints stay")
    }

    @Test func unconfiguredHostsAreBoundedToo() {
        let metrics = GatewayMetrics(maxHostUpstreams: 3)
        let observer = MetricsObserver(metrics: metrics, config: GatewayConfig())
        var upstreams = Set<String>()
        for i in 0..<50 {
            let request = ProxyRequest(method: .GET, scheme: .http, host: "Host\(i).example", port: 80, target: "/", headers: [:])
            upstreams.insert(observer.recorder(for: request).key.upstream)
        }
        #expect(upstreams == ["host0.example", "host1.example", "host2.example", "other"])
        #expect(metrics.upstreamLabel("host1.example") == "host1.example")
        #expect(metrics.upstreamLabel("host99.example") == "other")
    }

    /// Random hosts times random paths: the unconfigured hosts share one endpoint
    /// budget, so the series stay bounded by hosts + endpoints, not their product.
    @Test func unconfiguredHostsShareOneEndpointBudget() {
        let metrics = GatewayMetrics(maxHostUpstreams: 20)
        var config = GatewayConfig()
        config.metrics.maxEndpointsPerUpstream = 30
        let observer = MetricsObserver(metrics: metrics, config: config)
        for i in 0..<2_000 {
            let target = "/\(randomSegment())/\(randomSegment())"
            let request = ProxyRequest(method: .GET, scheme: .http, host: "h\(i % 40).example", port: 80, target: target, headers: [:])
            _ = observer.recorder(for: request)
        }
        let recorders = metrics.endpoints.all
        let named = recorders.filter { $0.key.endpoint != EndpointKey.overflow }
        #expect(named.count == 30, "one budget of 30 automatic endpoints for all unconfigured hosts")
        #expect(recorders.count <= 30 + 21, "plus at most one `other` endpoint per host label (20 hosts + other)")
    }

    @Test func extensionMethodsAreOneLabel() {
        #expect(EndpointKey.methodLabel(.RAW(value: "BREW")) == "OTHER")
        #expect(EndpointKey.methodLabel(.PATCH) == "PATCH")
    }
}
