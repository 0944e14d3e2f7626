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

    @Test(arguments: [("1KiB", true), ("1MiB", true), ("1023", false), ("1025KiB", false), ("0", false), ("1KB", false)])
    func maxHeadBytesRange(size: String, valid: Bool) {
        let yaml = "limits:\n  max_head_bytes: \(size)\n"
        if valid {
            #expect(TestSupport.parse(yaml) != nil)
        } else {
            TestSupport.expectError(yaml, keyPath: "limits.max_head_bytes", contains: "must be between 1KiB and 1MiB")
        }
    }

    @Test(arguments: [("16KiB", true), ("16MiB", true), ("256KiB", true), ("15KiB", false), ("17MiB", false), ("0", false)])
    func responseBufferRange(size: String, valid: Bool) {
        let yaml = "limits:\n  response_buffer: \(size)\n"
        if valid {
            #expect(TestSupport.parse(yaml) != nil)
        } else {
            TestSupport.expectError(yaml, keyPath: "limits.response_buffer", contains: "must be between 16KiB and 16MiB, got")
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
