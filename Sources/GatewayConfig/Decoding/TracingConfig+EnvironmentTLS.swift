import Foundation
import GatewayCore

/// The OpenTelemetry exporter's TLS variables over `tracing.tls` (the
/// signal's `_TRACES_` variant first, each variable on its own, as the
/// specification says); read only while tracing is on, like the others:
///
/// - `OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE`, `OTEL_EXPORTER_OTLP_CERTIFICATE`:
///   the PEM file of the CA(s) the collector's certificate is verified
///   against: `tls.ca_file`.
/// - `..._CLIENT_CERTIFICATE` and `..._CLIENT_KEY`: the PEM chain and key
///   presented to a collector that asks for a client certificate:
///   `tls.client_certificate`, read and checked as an upstream's (the key
///   refused when others can read it, or when it is not the certificate's).
///   One without the other is an error.
///
/// Relative paths are relative to the working directory (the variables are
/// the environment's, not the file's). Both apply to OTLP/HTTP and OTLP/gRPC,
/// which the upstream pool carries alike.
extension TracingConfig {
    static let tlsEnvironmentVariables = [
        "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE",
        "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
        "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    ]

    mutating func applyTLSEnvironment(_ environment: [String: String], file: String, readKey: Bool) throws(ConfigError) {
        func variable(_ suffix: String) -> (name: String, value: String)? {
            TracingConfig.firstSet(["OTEL_EXPORTER_OTLP_TRACES_\(suffix)", "OTEL_EXPORTER_OTLP_\(suffix)"], in: environment)
        }
        func absolute(_ path: String) -> String {
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        }
        if case let (name, value)? = variable("CERTIFICATE") {
            let path = absolute(value)
            if let problem = UpstreamTLSSettings.caFileProblem(path) {
                throw Self.environmentError(file: file, key: "tls.ca_file", variable: name, problem)
            }
            tls.caFile = path
            environmentSources["tls.ca_file"] = name
        }
        switch (variable("CLIENT_CERTIFICATE"), variable("CLIENT_KEY")) {
        case (nil, nil):
            return
        case (let (name, _)?, nil):
            throw Self.environmentError(
                file: file, key: "tls.client_certificate", variable: name, "set without OTEL_EXPORTER_OTLP_CLIENT_KEY (or its _TRACES_ variant)")
        case (nil, let (name, _)?):
            throw Self.environmentError(
                file: file, key: "tls.client_certificate", variable: name,
                "set without OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE (or its _TRACES_ variant)")
        case (let certificate?, let key?):
            do {
                tls.clientCertificate = try ClientCertificateLoader.load(
                    certificateFile: absolute(certificate.value), keyFile: absolute(key.value), readKey: readKey)
            } catch {
                let name = error.file == .certificate ? certificate.name : key.name
                throw Self.environmentError(file: file, key: "tls.client_certificate", variable: name, error.message)
            }
            environmentSources["tls.client_certificate"] = "\(certificate.name), \(key.name)"
        }
    }
}
