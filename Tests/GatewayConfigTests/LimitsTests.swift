import GatewayConfig
import Testing

@Suite("limits and pool")
struct LimitsTests {
    static let timeoutKeys = [
        "limits.header_timeout", "limits.idle_timeout", "limits.drain_timeout",
        "pool.idle_timeout", "pool.connect_timeout", "pool.request_timeout",
    ]

    @Test(arguments: timeoutKeys)
    func timeoutsMustBePositive(keyPath: String) {
        let parts = keyPath.split(separator: ".")
        TestSupport.expectError(
            "\(parts[0]):\n  \(parts[1]): 0ms\n", keyPath: keyPath, contains: "must be greater than 0, got 0ms")
        TestSupport.expectError("\(parts[0]):\n  \(parts[1]): 0\n", keyPath: keyPath, contains: "must be greater than 0")
    }

    /// Sizes with a range: `limits.KEY: SIZE` decodes, or names the key and the range.
    @Test(arguments: [
        ("max_head_bytes", "1KiB", true), ("max_head_bytes", "1MiB", true), ("max_head_bytes", "1023", false),
        ("max_head_bytes", "1025KiB", false), ("max_head_bytes", "0", false), ("max_head_bytes", "1KB", false),
        ("response_buffer", "16KiB", true), ("response_buffer", "16MiB", true), ("response_buffer", "256KiB", true),
        ("response_buffer", "15KiB", false), ("response_buffer", "17MiB", false), ("response_buffer", "0", false),
    ])
    func sizeRanges(key: String, size: String, valid: Bool) {
        let yaml = "limits:\n  \(key): \(size)\n"
        let range = key == "max_head_bytes" ? "between 1KiB and 1MiB" : "between 16KiB and 16MiB"
        if valid {
            #expect(TestSupport.parse(yaml) != nil)
        } else {
            TestSupport.expectError(yaml, keyPath: "limits.\(key)", contains: "must be \(range)")
        }
    }

    @Test func maxConnectionsPerHostAtLeastOne() {
        TestSupport.expectError(
            "pool:\n  max_connections_per_host: 0\n", keyPath: "pool.max_connections_per_host", contains: "must be at least 1, got 0")
        #expect(TestSupport.parse("pool:\n  max_connections_per_host: 1\n")?.pool.maxConnectionsPerHost == 1)
    }

    @Test func validateChecksValuesSetInCode() {
        var config = GatewayConfig()
        config.pool.requestTimeout = .zero
        let error = #expect(throws: ConfigError.self) { try config.validate() }
        #expect(error?.keyPath == "pool.request_timeout")
    }
}
