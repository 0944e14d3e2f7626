import GatewayConfig
import Testing

/// `tracing` from the file and from the standard OpenTelemetry variables.
@Suite("tracing")
struct TracingConfigTests {
    static let on = ["OTEL_TRACES_EXPORTER": "otlp"]

    @Test func offByDefault() throws {
        let config = try #require(TestSupport.parse(""))
        #expect(config.tracing == TracingConfig())
        #expect(!config.tracing.enabled)
        #expect(config.tracing.endpoint == "http://localhost:4318/v1/traces")
        #expect(config.tracing.exportProtocol == .httpProtobuf)
        #expect(config.tracing.serviceName == "gateway")
        #expect(config.tracing.sampler == .parentBasedTraceIDRatio && config.tracing.samplerRatio == 1)
        #expect(config.tracing.scheduleDelay == .seconds(5) && config.tracing.maxQueue == 2048)
    }

    @Test func everyKeyDecodes() throws {
        let yaml = """
            tracing:
              enabled: true
              endpoint: https://collector.internal:4318/v1/traces
              protocol: http/protobuf
              headers:
                - name: X-API-Key
                  value_env: OTLP_KEY
              service_name: edge
              sampler: traceidratio
              sampler_ratio: 0.25
              schedule_delay: 250ms
              max_queue: 100
            """
        let tracing = try #require(TestSupport.parse(yaml, environment: ["OTLP_KEY": "k-123"])?.tracing)
        #expect(tracing.enabled)
        #expect(tracing.endpoint == "https://collector.internal:4318/v1/traces")
        #expect(tracing.headers == [TracingConfig.Header(name: "X-API-Key", value: Secret(source: .env("OTLP_KEY"), value: "k-123"))])
        #expect(tracing.serviceName == "edge")
        #expect(tracing.sampler == .traceIDRatio && tracing.samplerRatio == 0.25)
        #expect(tracing.scheduleDelay == .milliseconds(250) && tracing.maxQueue == 100)
        #expect(tracing.environmentSources.isEmpty)
    }

    @Test func fileErrorsNameTheKey() {
        TestSupport.expectError("tracing:\n  enable: true\n", keyPath: "tracing.enable", contains: "did you mean \"enabled\"")
        TestSupport.expectError("tracing:\n  protocol: thrift\n", keyPath: "tracing.protocol", contains: "http/protobuf")
        TestSupport.expectError("tracing:\n  sampler: sometimes\n", keyPath: "tracing.sampler", contains: "parentbased_traceidratio")
        TestSupport.expectError("tracing:\n  sampler_ratio: 1.5\n", keyPath: "tracing.sampler_ratio", contains: "between 0 and 1")
        TestSupport.expectError("tracing:\n  endpoint: ftp://collector\n", keyPath: "tracing.endpoint", contains: "http:// or https://")
        TestSupport.expectError("tracing:\n  endpoint: http://user:pw@collector/v1/traces\n", keyPath: "tracing.endpoint", contains: "credentials")
        TestSupport.expectError("tracing:\n  schedule_delay: 0s\n", keyPath: "tracing.schedule_delay", contains: "greater than 0")
        TestSupport.expectError("tracing:\n  max_queue: 0\n", keyPath: "tracing.max_queue", contains: "between 1 and")
        TestSupport.expectError("tracing:\n  headers: [{value: x}]\n", keyPath: "tracing.headers[0]", contains: "expected a name")
        TestSupport.expectError("tracing:\n  headers: [{name: 'a b', value: x}]\n", keyPath: "tracing.headers[0]", contains: "not a valid header name")
        TestSupport.expectError("tracing:\n  headers: [{name: K, value_env: NOPE}]\n", keyPath: "tracing.headers[0].value_env", contains: "NOPE is not set")
    }

    @Test func theExporterVariableTurnsTracingOnAndTheOthersFillIt() throws {
        let environment = Self.on.merging([
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel:4318/",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=k-1, x-tenant = acme",
            "OTEL_SERVICE_NAME": "from-env",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "0.1",
            "OTEL_BSP_SCHEDULE_DELAY": "200",
            "OTEL_BSP_MAX_QUEUE_SIZE": "64",
        ]) { $1 }
        let tracing = try #require(TestSupport.parse("", environment: environment)?.tracing)
        #expect(tracing.enabled)
        #expect(tracing.endpoint == "http://otel:4318/v1/traces", "the signal's path added to the base URL")
        #expect(tracing.headers.map(\.name) == ["x-api-key", "x-tenant"])
        #expect(tracing.headers.map(\.value.value) == ["k-1", "acme"])
        #expect(tracing.headers.allSatisfy { $0.value.source == .env("OTEL_EXPORTER_OTLP_HEADERS") })
        #expect(tracing.serviceName == "from-env")
        #expect(tracing.samplerRatio == 0.1)
        #expect(tracing.scheduleDelay == .milliseconds(200) && tracing.maxQueue == 64)
        #expect(tracing.environmentSources["endpoint"] == "OTEL_EXPORTER_OTLP_ENDPOINT")
        #expect(tracing.environmentSources["enabled"] == "OTEL_TRACES_EXPORTER")
    }

    @Test func theEnvironmentWinsOverTheFileAndTheTracesVariablesOverTheShared() throws {
        let yaml = "tracing:\n  enabled: true\n  endpoint: http://file:4318/v1/traces\n  service_name: from-file\n"
        let environment = [
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://shared:4318",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces:4318/custom",
            "OTEL_SERVICE_NAME": "from-env",
        ]
        let tracing = try #require(TestSupport.parse(yaml, environment: environment)?.tracing)
        #expect(tracing.endpoint == "http://traces:4318/custom", "used as written")
        #expect(tracing.serviceName == "from-env")
        #expect(tracing.environmentSources["endpoint"] == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        #expect(tracing.environmentSources["enabled"] == nil)
    }

    @Test func noneOrTheSDKSwitchTurnsItOff() throws {
        let yaml = "tracing:\n  enabled: true\n"
        let none = try #require(TestSupport.parse(yaml, environment: ["OTEL_TRACES_EXPORTER": "none"]))
        #expect(!none.tracing.enabled)
        let disabled = try #require(TestSupport.parse(yaml, environment: ["OTEL_SDK_DISABLED": "true"]))
        #expect(!disabled.tracing.enabled)
        let both = try #require(TestSupport.parse("", environment: Self.on.merging(["OTEL_SDK_DISABLED": "TRUE"]) { $1 }))
        #expect(!both.tracing.enabled)
        let empty = try #require(TestSupport.parse(yaml, environment: ["OTEL_TRACES_EXPORTER": ""]))
        #expect(empty.tracing.enabled, "an empty variable is unset")
    }

    @Test func whileOffTheOtherVariablesAreNotRead() throws {
        // Another program's settings (gRPC, say) must not stop a gateway that does not trace.
        let environment = ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_TRACES_SAMPLER": "jaeger_remote", "OTEL_SERVICE_NAME": "other"]
        let tracing = try #require(TestSupport.parse("", environment: environment)?.tracing)
        #expect(tracing == TracingConfig())
    }

    @Test func variableErrorsNameTheVariableAndTheKeyNeverTheValue() {
        func on(_ more: [String: String]) -> [String: String] { Self.on.merging(more) { $1 } }
        TestSupport.expectError("", keyPath: "tracing.enabled", contains: "OTEL_TRACES_EXPORTER", environment: ["OTEL_TRACES_EXPORTER": "zipkin"])
        TestSupport.expectError("", keyPath: "tracing.protocol", contains: "OTEL_EXPORTER_OTLP_PROTOCOL", environment: on(["OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"]))
        TestSupport.expectError(
            "", keyPath: "tracing.protocol", contains: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            environment: on(["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"])
        )
        TestSupport.expectError("", keyPath: "tracing.sampler", contains: "OTEL_TRACES_SAMPLER", environment: on(["OTEL_TRACES_SAMPLER": "xray"]))
        TestSupport.expectError("", keyPath: "tracing.sampler_ratio", contains: "OTEL_TRACES_SAMPLER_ARG", environment: on(["OTEL_TRACES_SAMPLER_ARG": "2"]))
        TestSupport.expectError("", keyPath: "tracing.schedule_delay", contains: "set by OTEL_BSP_SCHEDULE_DELAY", environment: on(["OTEL_BSP_SCHEDULE_DELAY": "0"]))
        TestSupport.expectError("", keyPath: "tracing.endpoint", contains: "set by OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", environment: on(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317"]))
        let secretHeaders = on(["OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer s3cr3t,broken"])
        TestSupport.expectError("", keyPath: "tracing.headers", contains: "OTEL_EXPORTER_OTLP_HEADERS", environment: secretHeaders)
        #expect(TestSupport.error(of: "", environment: secretHeaders)?.description.contains("s3cr3t") == false)
    }

    @Test func theRedactedDumpShowsWhereValuesCameFromAndNoHeaderValue() throws {
        let yaml = "tracing:\n  headers: [{name: X-Inline, value: inline-s3cr3t}, {name: X-Env, value_env: OTLP_KEY}]\n"
        let fileEnvironment = ["OTLP_KEY": "env-s3cr3t"]
        let fromFile = try #require(TestSupport.parse(yaml, environment: fileEnvironment))
        let dump = fromFile.redactedYAML()
        #expect(!dump.contains("s3cr3t"), "\(dump)")
        #expect(dump.contains("value_env: OTLP_KEY"))
        #expect(try ConfigLoader.parse(yaml: dump, file: "dump.yaml", environment: fileEnvironment).tracing.headers.map(\.name) == ["X-Inline", "X-Env"])
        #expect(fromFile.warnings.contains { $0.hasPrefix("tracing.headers[0]:") })

        let environment = Self.on.merging(["OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=env-s3cr3t", "OTEL_SERVICE_NAME": "svc"]) { $1 }
        let fromEnvironment = try #require(TestSupport.parse("", environment: environment))
        let envDump = fromEnvironment.redactedYAML()
        #expect(!envDump.contains("s3cr3t"), "\(envDump)")
        #expect(envDump.contains("headers: []  # from OTEL_EXPORTER_OTLP_HEADERS: x-api-key (values <redacted>)"), "\(envDump)")
        #expect(envDump.contains("service_name: svc  # from OTEL_SERVICE_NAME"), "\(envDump)")
        #expect(envDump.contains("enabled: true  # from OTEL_TRACES_EXPORTER"), "\(envDump)")
        #expect(try ConfigLoader.parse(yaml: envDump, file: "dump.yaml", environment: environment) == fromEnvironment, "the same in the same environment")
    }

    @Test func grpcFromTheFileOrTheVariableWithItsDefaultEndpointAndTLS() throws {
        let file = try #require(TestSupport.parse("tracing:\n  enabled: true\n  protocol: grpc\n  tls:\n    insecure_skip_verify: true\n"))
        #expect(file.tracing.exportProtocol == .grpc)
        #expect(file.tracing.effectiveEndpoint == "http://localhost:4317", "the gRPC default while endpoint is the HTTP one")
        #expect(file.tracing.tls.insecureSkipVerify)
        let variable = try #require(TestSupport.parse("", environment: Self.on.merging(["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"]) { $1 }))
        #expect(variable.tracing.exportProtocol == .grpc)
        #expect(variable.tracing.environmentSources["protocol"] == "OTEL_EXPORTER_OTLP_PROTOCOL")
        TestSupport.expectError(
            "tracing:\n  protocol: grpc\n  tls:\n    ca_file: /nonexistent/ca.pem\n", keyPath: "tracing.tls.ca_file", contains: "does not exist")
    }
}
