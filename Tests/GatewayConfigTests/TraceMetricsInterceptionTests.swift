import GatewayConfig
import Testing

@Suite("trace, metrics, interception")
struct TraceMetricsInterceptionTests {
    @Test func defaults() {
        let config = GatewayConfig()
        #expect(
            config.trace
                == TraceConfig(
                    file: ".gateway/trace.jsonl", maxFileBytes: 10 * 1024 * 1024, maxFiles: 5, redact: true, redactHeaders: [],
                    redactQuery: [], redactJSONFields: [], bufferRecords: 1024))
        #expect(config.metrics == MetricsConfig(maxEndpointsPerUpstream: 200, statsWindow: .seconds(300)))
        #expect(config.interception == InterceptionConfig(caCert: ".gateway/ca.pem", caKey: ".gateway/ca-key.pem", leafCacheSize: 1000))
    }

    @Test func pathsDefaultUnderStateDir() {
        let config = TestSupport.parse("state_dir: /var/lib/gw\n")
        #expect(config?.trace.file == "/var/lib/gw/trace.jsonl")
        #expect(config?.interception.caCert == "/var/lib/gw/ca.pem")
        #expect(config?.interception.caKey == "/var/lib/gw/ca-key.pem")
        // Also when the sections are written without paths, before or after state_dir.
        let later = TestSupport.parse("trace:\n  max_files: 2\ninterception:\n  leaf_cache_size: 5\nstate_dir: state/\n")
        #expect(later?.trace.file == "state/trace.jsonl")
        #expect(later?.interception.caKey == "state/ca-key.pem")
        #expect(GatewayConfig(stateDir: "/s").trace.file == "/s/trace.jsonl")
        #expect(GatewayConfig(stateDir: "/s").interception.caCert == "/s/ca.pem")
    }

    @Test func traceDecodesEveryField() {
        let config = TestSupport.parse(
            """
            debug: true
            trace:
              file: /tmp/traces/t.jsonl
              max_file_size: 1MiB
              max_files: 2
              redact: false
              redact_headers: [X-Custom-Token, X-Other]
              redact_query: [sig]
              redact_json_fields: [pin, otp]
              buffer: 16
            """)
        #expect(
            config?.trace
                == TraceConfig(
                    file: "/tmp/traces/t.jsonl", maxFileBytes: 1024 * 1024, maxFiles: 2, redact: false,
                    redactHeaders: ["X-Custom-Token", "X-Other"], redactQuery: ["sig"], redactJSONFields: ["pin", "otp"], bufferRecords: 16))
        #expect(config?.debug == true)
    }

    @Test func nullSectionsGiveDefaults() {
        #expect(TestSupport.parse("trace:\nmetrics: ~\ninterception:\n") == GatewayConfig())
    }

    @Test(arguments: [
        ("trace:\n  max_file_size: 1023\n", "trace.max_file_size", "must be at least 1KiB, got 1023"),
        ("trace:\n  max_files: 0\n", "trace.max_files", "must be at least 1, got 0"),
        ("trace:\n  buffer: 0\n", "trace.buffer", "must be at least 1, got 0"),
        ("trace:\n  file: \"\"\n", "trace.file", "must not be empty"),
        ("trace:\n  file: /tmp/dir/\n", "trace.file", "must be a file path"),
        ("trace:\n  redact: maybe\n", "trace.redact", "expected true or false"),
        ("trace:\n  redact_headers: [ok, \"bad header\"]\n", "trace.redact_headers[1]", "not a valid header name"),
        ("trace:\n  redact_headers: X-Token\n", "trace.redact_headers", "expected a list of header names"),
        ("trace:\n  redact_query: [\"\"]\n", "trace.redact_query[0]", "must not be empty"),
        ("trace:\n  redact_json_fields: [a, \"\"]\n", "trace.redact_json_fields[1]", "must not be empty"),
        ("trace:\n  max_file_size: big\n", "trace.max_file_size", "expected a size"),
        ("trace:\n  redact_header: [a]\n", "trace.redact_header", "did you mean \"redact_headers\"?"),
        ("metrics:\n  max_endpoints_per_upstream: 0\n", "metrics.max_endpoints_per_upstream", "between 1 and 10000, got 0"),
        ("metrics:\n  max_endpoints_per_upstream: 10001\n", "metrics.max_endpoints_per_upstream", "between 1 and 10000"),
        ("metrics:\n  stats_window: 0s\n", "metrics.stats_window", "must be greater than 0"),
        ("metrics:\n  window: 5m\n", "metrics.window", "unknown key 'window'"),
        ("interception:\n  leaf_cache_size: 0\n", "interception.leaf_cache_size", "must be at least 1, got 0"),
        ("interception:\n  ca_cert: /s/ca.pem\n  ca_key: /s/ca.pem\n", "interception.ca_key", "must differ from ca_cert"),
        ("interception:\n  ca_key: \"\"\n", "interception.ca_key", "must not be empty"),
        ("interception:\n  ca: x\n", "interception.ca", "unknown key 'ca'"),
    ])
    func rules(yaml: String, keyPath: String, fragment: String) {
        TestSupport.expectError(yaml, keyPath: keyPath, contains: fragment)
    }

    @Test func metricsAndInterceptionDecode() {
        let config = TestSupport.parse(
            "metrics:\n  max_endpoints_per_upstream: 50\n  stats_window: 1m\ninterception:\n  ca_cert: ca/c.pem\n  ca_key: ca/k.pem\n  leaf_cache_size: 10\n"
        )
        #expect(config?.metrics == MetricsConfig(maxEndpointsPerUpstream: 50, statsWindow: .seconds(60)))
        #expect(config?.interception == InterceptionConfig(caCert: "ca/c.pem", caKey: "ca/k.pem", leafCacheSize: 10))
    }

    @Test func redactionSetsCombineBuiltInsConfigAndAuth() {
        let yaml = """
            trace:
              redact_headers: [X-Custom-Token]
              redact_query: [Sig]
              redact_json_fields: [pin]
            upstreams:
              - name: a
                hosts: [a.test]
                auth: { type: header, name: X-Vendor-Key, value: v }
              - name: b
                hosts: [b.test]
                auth: { type: query, param: apikey, value: v }
            """
        let config = TestSupport.parse(yaml)
        #expect(config?.redactedHeaderNames == [
            "authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token", "private-token", "x-amz-security-token",
            "x-custom-token", "x-vendor-key",
        ])
        #expect(config?.redactedQueryParameters == ["access_token", "api_key", "token", "client_secret", "code", "sig", "apikey"])
        #expect(config?.redactedJSONFields == ["password", "client_secret", "refresh_token", "access_token", "pin"])
    }

    @Test func builtInRedactionListsAreTheDocumentedOnes() {
        #expect(TraceConfig.builtInRedactHeaders == [
            "Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-API-Key", "X-Auth-Token", "Private-Token", "X-Amz-Security-Token",
        ])
        #expect(TraceConfig.builtInRedactQuery == ["access_token", "api_key", "token", "client_secret", "code"])
        #expect(TraceConfig.builtInRedactJSONFields == ["password", "client_secret", "refresh_token", "access_token"])
    }
}
