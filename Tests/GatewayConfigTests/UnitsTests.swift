import GatewayConfig
import Testing

@Suite("Durations and sizes")
struct UnitsTests {
    static let durations: [(String, Duration)] = [
        ("250ms", .milliseconds(250)),
        ("1ms", .milliseconds(1)),
        ("10s", .seconds(10)),
        ("2m", .seconds(120)),
        ("1h", .seconds(3600)),
        ("10", .seconds(10)),
        ("0s", .zero),  // parses; timeouts then reject it as not > 0
        ("1500ms", .milliseconds(1500)),
        ("90 s", .seconds(90)),
        ("\"45s\"", .seconds(45)),  // quoted in YAML
    ]

    @Test(arguments: durations)
    func parsesDuration(text: String, expected: Duration) {
        if expected == .zero {
            TestSupport.expectError(
                "limits:\n  drain_timeout: \(text)\n", keyPath: "limits.drain_timeout", contains: "must be greater than 0")
        } else {
            #expect(TestSupport.parse("limits:\n  drain_timeout: \(text)\n")?.limits.drainTimeout == expected)
        }
    }

    @Test(arguments: ["ten", "10 seconds", "1.5s", "-5s", "10S", "5d", "1h30m", "s", "", "1e3", "0x10", "[1s]"])
    func rejectsMalformedDuration(text: String) {
        let yaml = "pool:\n  connect_timeout: \(text == "" ? "\"\"" : text)\n"
        TestSupport.expectError(yaml, keyPath: "pool.connect_timeout", contains: "expected a duration like 10s or 250ms")
    }

    @Test func durationErrorQuotesTheValue() {
        TestSupport.expectError(
            "limits:\n  header_timeout: ten\n",
            keyPath: "limits.header_timeout",
            contains: "expected a duration like 10s or 250ms, got 'ten'"
        )
    }

    static let sizes: [(String, Int)] = [
        ("1024", 1024),
        ("1KiB", 1024),
        ("32KiB", 32 * 1024),
        ("1MiB", 1024 * 1024),
        ("2KB", 2000),
        ("32KB", 32_000),
        ("1MB", 1_000_000),  // within 1KiB...1MiB (1,048,576)
        ("4096B", 4096),
        ("8 KiB", 8192),
    ]

    @Test(arguments: sizes)
    func parsesSize(text: String, expected: Int) {
        #expect(TestSupport.parse("limits:\n  max_head_bytes: \(text)\n")?.limits.maxHeadBytes == expected)
    }

    @Test(arguments: ["32k", "32kib", "32 K", "1.5KiB", "-1KiB", "KiB", "lots", "32KiBs", "1TiB"])
    func rejectsMalformedSize(text: String) {
        TestSupport.expectError(
            "limits:\n  max_head_bytes: \(text)\n", keyPath: "limits.max_head_bytes", contains: "expected a size like 32KiB or 1MiB")
    }

    @Test func gigabyteUnitsParseButExceedTheHeadLimit() {
        TestSupport.expectError(
            "limits:\n  max_head_bytes: 1GiB\n", keyPath: "limits.max_head_bytes", contains: "between 1KiB and 1MiB, got 1GiB")
        TestSupport.expectError(
            "limits:\n  max_head_bytes: 1GB\n", keyPath: "limits.max_head_bytes", contains: "between 1KiB and 1MiB, got 1GB")
    }

    @Test func hugeNumbersAreRejectedNotOverflowed() {
        TestSupport.expectError(
            "pool:\n  idle_timeout: 99999999999999999h\n", keyPath: "pool.idle_timeout", contains: "expected a duration")
        TestSupport.expectError(
            "limits:\n  max_head_bytes: 99999999999999999GiB\n", keyPath: "limits.max_head_bytes", contains: "expected a size")
    }
}
