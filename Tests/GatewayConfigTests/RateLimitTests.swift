import GatewayConfig
import Testing

@Suite("upstreams[].rate_limit")
struct RateLimitTests {
    static func limit(_ body: String) -> String {
        "upstreams:\n  - name: api\n    hosts: [api.example.com]\n    rate_limit:\n" + body
    }

    static func decoded(_ body: String) -> RateLimitConfig? {
        TestSupport.parse(limit(body))?.upstreams.first?.rateLimit
    }

    @Test func defaults() {
        let limit = RateLimitConfig()
        #expect(limit.requestsPerSecond == nil)
        #expect(limit.burst == 1)
        #expect(limit.maxQueue == 100)
        #expect(limit.maxWait == .seconds(10))
        #expect(limit.honorUpstream == true)
        #expect(limit.perEndpoint == false)
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n    rate_limit: {}\n")?.upstreams.first?.rateLimit == limit)
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")?.upstreams.first?.rateLimit == nil)
    }

    @Test func everyField() {
        let limit = Self.decoded(
            "      requests_per_second: 10\n      burst: 20\n      max_queue: 0\n      max_wait: 250ms\n      honor_upstream: false\n      per_endpoint: true\n"
        )
        #expect(
            limit
                == RateLimitConfig(
                    requestsPerSecond: 10, burst: 20, maxQueue: 0, maxWait: .milliseconds(250), honorUpstream: false, perEndpoint: true))
    }

    @Test(arguments: [("10", 10), ("0.5", 1), ("2.5", 3), ("1", 1), ("100", 100)])
    func burstDefaultsToOneSecondOfRate(rate: String, burst: Int) {
        let limit = Self.decoded("      requests_per_second: \(rate)\n")
        #expect(limit?.requestsPerSecond == Double(rate))
        #expect(limit?.burst == burst)
        #expect(RateLimitConfig(requestsPerSecond: Double(rate)).burst == burst)
    }

    @Test(arguments: ["0", "-1", "0.0"])
    func rateMustBePositive(rate: String) {
        TestSupport.expectError(
            Self.limit("      requests_per_second: \(rate)\n"), keyPath: "upstreams[0].rate_limit.requests_per_second",
            contains: "must be greater than 0")
    }

    @Test func burstRules() {
        TestSupport.expectError(
            Self.limit("      requests_per_second: 5\n      burst: 0\n"), keyPath: "upstreams[0].rate_limit.burst", contains: "must be at least 1, got 0")
        TestSupport.expectError(
            Self.limit("      burst: 5\n"), keyPath: "upstreams[0].rate_limit.burst", contains: "no effect without requests_per_second")
    }

    @Test func queueAndWaitBounds() {
        TestSupport.expectError(
            Self.limit("      max_queue: -1\n"), keyPath: "upstreams[0].rate_limit.max_queue", contains: "must be 0 or more, got -1")
        #expect(Self.decoded("      max_wait: 0s\n")?.maxWait == .zero)
        TestSupport.expectError(
            Self.limit("      max_wait: soon\n"), keyPath: "upstreams[0].rate_limit.max_wait", contains: "expected a duration")
    }

    @Test func unknownKeysAndTypes() {
        TestSupport.expectError(
            Self.limit("      rps: 5\n"), keyPath: "upstreams[0].rate_limit.rps", contains: "unknown key 'rps'")
        TestSupport.expectError(
            Self.limit("      requests_per_second: fast\n"), keyPath: "upstreams[0].rate_limit.requests_per_second",
            contains: "expected a number like 20 or 2.5, got 'fast'")
        TestSupport.expectError(
            Self.limit("      per_endpoint: 1\n"), keyPath: "upstreams[0].rate_limit.per_endpoint", contains: "expected true or false")
    }

    @Test func validateChecksValuesSetInCode() {
        var config = GatewayConfig()
        config.upstreams = TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")!.upstreams
        config.upstreams[0].rateLimit = RateLimitConfig(requestsPerSecond: .infinity)
        let error = #expect(throws: ConfigError.self) { try config.validate() }
        #expect(error?.keyPath == "upstreams[0].rate_limit.requests_per_second")
    }
}
