import Foundation
import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The OpenTelemetry exporter's TLS variables (`OTEL_EXPORTER_OTLP_CERTIFICATE`,
/// `_CLIENT_CERTIFICATE`, `_CLIENT_KEY`, and their `_TRACES_` variants, which
/// win) set `tracing.tls`; each problem names its variable, never the key.
extension ClientCertificateConfigTests {
    static let tracingOn = ["OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.test:4318"]

    @Test func theOTLPVariablesSetTracingTLSTheTracesVariantsFirst() throws {
        let f = try files()
        let other = try files()
        defer { for dir in [f.directory, other.directory] { try? FileManager.default.removeItem(atPath: dir) } }
        let ca = "\(f.directory)/ca.pem"
        try f.pki.rootPEM.write(toFile: ca, atomically: true, encoding: .utf8)
        let environment = Self.tracingOn.merging([
            "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca, "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem",
            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": f.paths.chain, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": other.paths.chain,
            "OTEL_EXPORTER_OTLP_CLIENT_KEY": f.paths.key,
        ]) { $1 }
        let tracing = try #require(TestSupport.parse("", environment: environment)).tracing
        #expect(tracing.tls.caFile == ca)
        let client = try #require(tracing.tls.clientCertificate)
        #expect(client.certificateFile == f.paths.chain && client.keyFile == f.paths.key)
        #expect(client.subject.contains("CN=payments-client"))
        #expect(tracing.environmentSources["tls.ca_file"] == "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE")
        #expect(tracing.environmentSources["tls.client_certificate"] == "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE, OTEL_EXPORTER_OTLP_CLIENT_KEY")

        let dump = try #require(TestSupport.parse("", environment: environment)).redactedYAML()
        #expect(dump.contains("# tls.ca_file from OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"), "\(dump)")
        #expect(!dump.contains("PRIVATE KEY"))
        #expect(try ConfigLoader.parse(yaml: dump, file: "dump.yaml", environment: environment).tracing.tls == tracing.tls)
    }

    @Test func whileTracingIsOffTheTLSVariablesAreNotRead() throws {
        let environment = ["OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem", "OTEL_EXPORTER_OTLP_CLIENT_KEY": "/nonexistent/key.pem"]
        #expect(try #require(TestSupport.parse("", environment: environment)).tracing.tls == .standard)
    }

    @Test func eachTLSVariableProblemNamesItsVariableNeverTheKey() throws {
        let f = try files()
        let open = try files(keyMode: 0o644)
        defer { for dir in [f.directory, open.directory] { try? FileManager.default.removeItem(atPath: dir) } }
        func on(_ more: [String: String]) -> [String: String] { Self.tracingOn.merging(more) { $1 } }
        TestSupport.expectError(
            "", keyPath: "tracing.tls.ca_file", contains: "OTEL_EXPORTER_OTLP_CERTIFICATE: CA file /nonexistent/ca.pem does not exist",
            environment: on(["OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"]))
        TestSupport.expectError(
            "", keyPath: "tracing.tls.client_certificate", contains: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: set without OTEL_EXPORTER_OTLP_CLIENT_KEY",
            environment: on(["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": f.paths.chain]))
        TestSupport.expectError(
            "", keyPath: "tracing.tls.client_certificate", contains: "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY: set without",
            environment: on(["OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": f.paths.key]))
        let readable = on(["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": open.paths.chain, "OTEL_EXPORTER_OTLP_CLIENT_KEY": open.paths.key])
        TestSupport.expectError("", keyPath: "tracing.tls.client_certificate", contains: "OTEL_EXPORTER_OTLP_CLIENT_KEY: key file", environment: readable)
        TestSupport.expectError("", keyPath: "tracing.tls.client_certificate", contains: "chmod 600", environment: readable)
        let mismatched = on(["OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": open.paths.chain, "OTEL_EXPORTER_OTLP_CLIENT_KEY": f.paths.key])
        TestSupport.expectError("", keyPath: "tracing.tls.client_certificate", contains: "is not the key of the certificate", environment: mismatched)
        let key = try String(contentsOfFile: f.paths.key, encoding: .utf8)
        #expect(TestSupport.error(of: "", environment: mismatched)?.description.contains(key.split(separator: "\n")[1]) == false)
    }
}
