import GatewayConfig
import Testing

@Suite("upstreams[].retry")
struct RetryTests {
    static func retry(_ body: String) -> String {
        "upstreams:\n  - name: api\n    hosts: [api.example.com]\n    retry:\n" + body
    }

    static func decoded(_ body: String) -> RetryConfig? {
        TestSupport.parse(retry(body))?.upstreams.first?.retry
    }

    @Test func defaults() {
        let retry = RetryConfig()
        #expect(retry.attempts == 3)
        #expect(retry.backoffBase == .milliseconds(100))
        #expect(retry.backoffMax == .seconds(5))
        #expect(retry.on == [.connectFailure, .reset, .timeout, .status(502), .status(503), .status(504), .status(429)])
        #expect(retry.budgetPercent == 20)
        #expect(retry.budgetMinPerSecond == 5)
        #expect(retry.bufferLimit == 1024 * 1024)
        #expect(retry.perTryTimeout == nil)
        #expect(retry.deadline == nil)
        #expect(retry.retryNonIdempotent == false)
    }

    @Test func absentOrNullMeansNoRetriesAndEmptyMeansDefaults() {
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")?.upstreams.first?.retry == nil)
        #expect(Self.decoded("") == nil)
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n    retry: {}\n")?.upstreams.first?.retry == RetryConfig())
    }

    @Test func everyField() {
        let retry = Self.decoded(
            """
                  attempts: 5
                  backoff: { base: 50ms, max: 2s }
                  on: [connect-failure, 503, 429]
                  budget: { percent: 12.5, min_per_second: 0.5 }
                  buffer_limit: 64KiB
                  per_try_timeout: 3s
                  deadline: 20s
                  retry_non_idempotent: true

            """)
        #expect(
            retry
                == RetryConfig(
                    attempts: 5, backoffBase: .milliseconds(50), backoffMax: .seconds(2),
                    on: [.connectFailure, .status(503), .status(429)], budgetPercent: 12.5, budgetMinPerSecond: 0.5,
                    bufferLimit: 64 * 1024, perTryTimeout: .seconds(3), deadline: .seconds(20), retryNonIdempotent: true))
    }

    @Test func partialSubsectionsKeepDefaults() {
        let retry = Self.decoded("      backoff:\n        max: 10s\n      budget:\n        percent: 50\n")
        #expect(retry?.backoffBase == .milliseconds(100))
        #expect(retry?.backoffMax == .seconds(10))
        #expect(retry?.budgetPercent == 50)
        #expect(retry?.budgetMinPerSecond == 5)
    }

    @Test(arguments: [
        ("connect-failure", RetryCondition.connectFailure), ("reset", .reset), ("timeout", .timeout), ("Timeout", .timeout),
        ("400", .status(400)), ("599", .status(599)),
    ])
    func conditions(text: String, expected: RetryCondition) {
        #expect(Self.decoded("      on: [\(text)]\n")?.on == [expected])
        #expect(RetryCondition(text.lowercased()) == expected)
    }

    @Test(arguments: ["200", "399", "600", "5xx", "connect_failure", "refused", "-502", "0502"])
    func unknownConditionsAreNamed(text: String) {
        TestSupport.expectError(
            Self.retry("      on: [reset, \"\(text)\"]\n"), keyPath: "upstreams[0].retry.on[1]",
            contains: "expected connect-failure, reset, timeout or an HTTP status from 400 to 599, got '\(text)'")
    }

    @Test func conditionDescriptionsAreTheYAMLSpelling() {
        #expect(RetryConfig.defaultOn.sorted().map(\.description) == ["connect-failure", "reset", "timeout", "429", "502", "503", "504"])
    }

    @Test func onMustNotBeEmpty() {
        TestSupport.expectError(Self.retry("      on: []\n"), keyPath: "upstreams[0].retry.on", contains: "at least one condition")
    }

    @Test(arguments: ["0", "-1"])
    func attemptsAtLeastOne(value: String) {
        TestSupport.expectError(
            Self.retry("      attempts: \(value)\n"), keyPath: "upstreams[0].retry.attempts", contains: "must be at least 1 (1 means no retries), got \(value)")
    }

    @Test func attemptsOneIsValid() {
        #expect(Self.decoded("      attempts: 1\n")?.attempts == 1)
    }

    @Test func backoffRules() {
        TestSupport.expectError(
            Self.retry("      backoff: { base: 0ms }\n"), keyPath: "upstreams[0].retry.backoff.base", contains: "must be greater than 0, got 0ms")
        TestSupport.expectError(
            Self.retry("      backoff: { base: 2s, max: 1s }\n"), keyPath: "upstreams[0].retry.backoff.max",
            contains: "must be at least backoff.base (2s), got 1s")
        #expect(Self.decoded("      backoff: { base: 1s, max: 1s }\n")?.backoffMax == .seconds(1))
        TestSupport.expectError(
            Self.retry("      backoff: { bas: 1s }\n"), keyPath: "upstreams[0].retry.backoff.bas", contains: "did you mean \"base\"?")
        TestSupport.expectError(Self.retry("      backoff: 1s\n"), keyPath: "upstreams[0].retry.backoff", contains: "expected a mapping")
    }

    @Test(arguments: [("-1", "got -1"), ("100.5", "got 100.5"), ("150", "got 150")])
    func budgetPercentRange(value: String, fragment: String) {
        TestSupport.expectError(
            Self.retry("      budget: { percent: \(value) }\n"), keyPath: "upstreams[0].retry.budget.percent",
            contains: "must be between 0 and 100, \(fragment)")
    }

    @Test(arguments: ["0", "100", "0.1"])
    func budgetPercentBounds(value: String) {
        #expect(Self.decoded("      budget: { percent: \(value) }\n")?.budgetPercent == Double(value))
    }

    @Test(arguments: ["lots", "1e3", ".5", "5.", "1.2.3", "nan", ".inf", "0x10"])
    func numbersAreDecimal(value: String) {
        TestSupport.expectError(
            Self.retry("      budget: { percent: \(value) }\n"), keyPath: "upstreams[0].retry.budget.percent",
            contains: "expected a number like 20 or 2.5, got '\(value)'")
    }

    @Test func budgetMinimumNotNegative() {
        TestSupport.expectError(
            Self.retry("      budget: { min_per_second: -0.5 }\n"), keyPath: "upstreams[0].retry.budget.min_per_second",
            contains: "must be 0 or more, got -0.5")
        #expect(Self.decoded("      budget: { min_per_second: 0 }\n")?.budgetMinPerSecond == 0)
    }

    @Test func bufferLimit() {
        #expect(Self.decoded("      buffer_limit: 0\n")?.bufferLimit == 0)
        TestSupport.expectError(
            Self.retry("      buffer_limit: 2GiB\n"), keyPath: "upstreams[0].retry.buffer_limit", contains: "between 0 and 1GiB, got 2GiB")
        TestSupport.expectError(
            Self.retry("      buffer_limit: big\n"), keyPath: "upstreams[0].retry.buffer_limit", contains: "expected a size")
    }

    @Test func timeoutsArePositiveAndConsistent() {
        TestSupport.expectError(
            Self.retry("      per_try_timeout: 0s\n"), keyPath: "upstreams[0].retry.per_try_timeout", contains: "must be greater than 0")
        TestSupport.expectError(
            Self.retry("      deadline: 0\n"), keyPath: "upstreams[0].retry.deadline", contains: "must be greater than 0")
        TestSupport.expectError(
            Self.retry("      per_try_timeout: 10s\n      deadline: 5s\n"), keyPath: "upstreams[0].retry.per_try_timeout",
            contains: "is longer than deadline (5s), so it never applies; got 10s")
        #expect(Self.decoded("      per_try_timeout: 5s\n      deadline: 5s\n")?.deadline == .seconds(5))
    }

    @Test func unknownKeysAndTypes() {
        TestSupport.expectError(Self.retry("      attempt: 2\n"), keyPath: "upstreams[0].retry.attempt", contains: "did you mean \"attempts\"?")
        TestSupport.expectError(
            Self.retry("      retry_non_idempotent: sometimes\n"), keyPath: "upstreams[0].retry.retry_non_idempotent",
            contains: "expected true or false")
        TestSupport.expectError(Self.retry("      on: reset\n"), keyPath: "upstreams[0].retry.on", contains: "expected a list of retry conditions")
    }

    @Test func validateChecksValuesSetInCode() {
        var retry = RetryConfig()
        retry.on = [.status(200)]
        var config = GatewayConfig()
        config.upstreams = TestSupport.parse("upstreams:\n  - name: a\n    hosts: [a.com]\n")!.upstreams
        config.upstreams[0].retry = retry
        let error = #expect(throws: ConfigError.self) { try config.validate() }
        #expect(error?.keyPath == "upstreams[0].retry.on")
        #expect(error?.message.contains("status 200 is not an error status") == true)
    }
}
