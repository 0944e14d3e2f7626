import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// OTLP over gRPC (`protocol: grpc`, `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`): the
/// spans reach a grpcio collector implementing `TraceService/Export`, over h2c
/// and over TLS verified with `tracing.tls.ca_file` and presenting a client
/// certificate; a collector answering a gRPC error status counts the spans as
/// `export_failed`.
@Suite(.timeLimit(.minutes(2)))
struct TracingGRPCTests {
    static let apiKey = Secret(source: .env("OTLP_API_KEY"), value: "grpc-key-5e2a")

    static func tracing(endpoint: String, tls: UpstreamTLSSettings = .standard) throws -> TracingConfig {
        var tracing = TracingConfig()
        try tracing.applyEnvironment(
            ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
             "OTEL_SERVICE_NAME": "gateway-grpc", "OTEL_BSP_SCHEDULE_DELAY": "100"],
            file: "environment")
        tracing.headers = [TracingConfig.Header(name: "x-api-key", value: Self.apiKey)]
        tracing.tls = tls
        return tracing
    }

    func request(_ gateway: GatewayHarness, _ upstream: TestUpstream) async throws {
        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/echo/1")])
        #expect(result.stdoutString == "200", "\(result.stderrString)")
    }

    @Test func spansReachAGRPCCollectorOverH2C() async throws {
        let collector = try await OTLPGRPCReceiver.start()
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(endpoint: "http://127.0.0.1:\(collector.port)")
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); collector.stop() } }
        try await request(gateway, upstream)
        let arrived = await collector.waitFor { $0.spans.contains { $0.kind == 2 } && $0.spans.contains { $0.kind == 3 } }
        #expect(arrived, "\(collector.log)\n\(gateway.logs.text)")
        let server = try #require(collector.spans.first { $0.kind == 2 })
        #expect(server.serviceName == "gateway-grpc")
        #expect(server.apiKey == Self.apiKey.value, "tracing.headers go as gRPC metadata")
        #expect(gateway.logs.text.contains("OTLP/gRPC"))
        #expect(!gateway.logs.text.contains(Self.apiKey.value), "the header's value is never logged")
    }

    @Test func spansReachATLSCollectorWithCAFileAndClientCertificate() async throws {
        let files = try MutualTLSFiles(prefix: "gateway-otlp-grpc", clientName: "gateway-exporter")
        let collector = try await OTLPGRPCReceiver.start(tls: files.collectorTLS)
        let upstream = try await TestUpstream.start()
        let client = try ClientCertificateLoader.load(certificateFile: files.clientFiles.chain, keyFile: files.clientFiles.key)
        let gateway = try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(
                endpoint: "https://localhost:\(collector.port)", tls: UpstreamTLSSettings(caFile: files.server.caBundle, clientCertificate: client))
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); collector.stop() } }
        try await request(gateway, upstream)
        let arrived = await collector.waitFor { $0.spans.contains { $0.kind == 2 } }
        #expect(arrived, "\(collector.log)\n\(gateway.logs.text)")
        #expect(collector.spans.first?.clientCN == "gateway-exporter", "the collector saw the client certificate")
    }

    @Test func aGRPCErrorStatusCountsTheSpansAsExportFailed() async throws {
        let collector = try await OTLPGRPCReceiver.start(failWith: 14)  // UNAVAILABLE
        let upstream = try await TestUpstream.start()
        let gateway = try await GatewayHarness.start { config in
            config.tracing = try Self.tracing(endpoint: "http://127.0.0.1:\(collector.port)")
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])]
        }
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); collector.stop() } }
        try await request(gateway, upstream)
        #expect(await collector.waitFor { $0.refusals >= 1 }, "\(collector.log)")
        let metrics = try await gateway.metrics(containing: "gateway_trace_spans_dropped_total{reason=\"export_failed\"} 2")
        #expect(metrics.contains("gateway_trace_spans_dropped_total{reason=\"export_failed\"} 2"), "\(metrics)")
        #expect(gateway.logs.text.contains("grpc-status 14"), "\(gateway.logs.text)")
    }
}
