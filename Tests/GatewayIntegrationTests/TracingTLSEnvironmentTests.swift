import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The exporter's TLS from the standard variables alone
/// (`OTEL_EXPORTER_OTLP_CERTIFICATE`, `OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE`
/// and `_CLIENT_KEY`): spans reach a collector that requires a client
/// certificate, over OTLP/HTTP (a Python `ssl` server, `CERT_REQUIRED`) and
/// over OTLP/gRPC (grpcio, `require_client_auth`), both carried by the
/// upstream pool; a collector whose certificate the configured CA did not
/// sign gets nothing, and its spans are counted as `export_failed`.
@Suite(.timeLimit(.minutes(2)))
struct TracingTLSEnvironmentTests {
    func fixture() throws -> MutualTLSFiles {
        try MutualTLSFiles(prefix: "gateway-otlp-env", clientName: "gateway-exporter")
    }

    /// A gateway whose `tracing` comes from these variables only (through the config loader), tracing requests to `upstream`.
    func gateway(_ f: MutualTLSFiles, exportProtocol: String, port: Int, caFile: String? = nil) async throws -> GatewayHarness {
        let environment = [
            "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": exportProtocol,
            "OTEL_EXPORTER_OTLP_ENDPOINT": "https://localhost:\(port)", "OTEL_EXPORTER_OTLP_CERTIFICATE": caFile ?? f.server.caBundle,
            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": f.clientFiles.chain, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": f.clientFiles.key,
            "OTEL_SERVICE_NAME": "gateway-mtls", "OTEL_BSP_SCHEDULE_DELAY": "100",
        ]
        let tracing = try ConfigLoader.parse(yaml: "", file: "\(f.dir)/gateway.yaml", environment: environment).tracing
        return try await GatewayHarness.start { config in
            config.tracing = tracing
            config.upstreams = [UpstreamConfig(name: "api", hosts: [HostPattern("127.0.0.1")!])]
        }
    }

    func request(_ gateway: GatewayHarness, _ upstream: TestUpstream) async throws {
        let result = try await gateway.curl(["-o", "/dev/null", "-w", "%{http_code}", upstream.url("/echo/1")])
        #expect(result.stdoutString == "200", "\(result.stderrString)")
    }

    @Test func httpProtobufReachesACollectorRequiringAClientCertificate() async throws {
        let f = try fixture()
        let collector = try await OTLPReceiver.start(tls: f.collectorTLS)
        let upstream = try await TestUpstream.start()
        let gateway = try await gateway(f, exportProtocol: "http/protobuf", port: collector.port)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await collector.stop() } }
        try await request(gateway, upstream)
        let spans = await collector.waitForSpans { $0.contains(where: \.isServer) && $0.contains(where: \.isClient) }
        let server = try #require(spans.first { $0.isServer }, "\(collector.log)\n\(gateway.logs.text)")
        #expect(server.clientCN == "gateway-exporter", "the collector saw the client certificate")
        #expect(server.serviceName == "gateway-mtls")
        #expect(server.path == "/v1/traces" && server.contentType == "application/x-protobuf")
        #expect(!gateway.logs.text.contains("PRIVATE KEY"))
    }

    @Test func grpcReachesATLSCollectorRequiringAClientCertificate() async throws {
        let f = try fixture()
        let collector = try await OTLPGRPCReceiver.start(tls: f.collectorTLS)
        let upstream = try await TestUpstream.start()
        let gateway = try await gateway(f, exportProtocol: "grpc", port: collector.port)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); collector.stop() } }
        try await request(gateway, upstream)
        let arrived = await collector.waitFor { $0.spans.contains { $0.kind == 2 } }
        #expect(arrived, "\(collector.log)\n\(gateway.logs.text)")
        #expect(collector.spans.first?.clientCN == "gateway-exporter", "the collector saw the client certificate")
        #expect(collector.spans.first?.serviceName == "gateway-mtls")
    }

    @Test(arguments: ["http/protobuf", "grpc"])
    func aCollectorTheCADidNotSignIsACountedExportFailure(_ exportProtocol: String) async throws {
        let f = try fixture()
        let otherCA = "\(f.dir)/other-ca.pem"
        try TestCertificates().rootPEM.write(toFile: otherCA, atomically: true, encoding: .utf8)
        let http = exportProtocol == "grpc" ? nil : try await OTLPReceiver.start(tls: f.collectorTLS)
        let grpc = exportProtocol == "grpc" ? try await OTLPGRPCReceiver.start(tls: f.collectorTLS) : nil
        let port = try #require(http?.port ?? grpc?.port)
        let upstream = try await TestUpstream.start()
        let gateway = try await gateway(f, exportProtocol: exportProtocol, port: port, caFile: otherCA)
        defer { Task { try? await gateway.stop(); try? await upstream.shutdown(); await http?.stop(); grpc?.stop() } }

        try await request(gateway, upstream)
        let failed = "gateway_trace_spans_dropped_total{reason=\"export_failed\"} 2"
        let metrics = try await gateway.metrics(containing: failed)
        #expect(metrics.contains(failed), "\(metrics)\n\(gateway.logs.text)")
        #expect(gateway.logs.text.contains("spans not exported"), "\(gateway.logs.text)")
        #expect(http?.spans.isEmpty ?? true)
        #expect(grpc?.spans.isEmpty ?? true)
        // The gateway goes on serving.
        try await request(gateway, upstream)
    }
}
