import Foundation

/// The standard OpenTelemetry SDK variables over the file's `tracing` values:
/// the environment wins, as in the OpenTelemetry SDKs that read them (the
/// gateway's exporter reads nothing else).
///
/// `OTEL_TRACES_EXPORTER=otlp` turns tracing on, `none` (or
/// `OTEL_SDK_DISABLED=true`) off. While it is off, no other variable is read:
/// the variables another program of the same environment is given never stop
/// the gateway. Once on, a variable the gateway cannot honour is an error
/// naming it (and the key it sets), never its value.
extension TracingConfig {
    /// The variables this reads, in the order it applies them (README, `config/gateway.yaml`).
    public static let environmentVariables = [
        "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_SERVICE_NAME", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_MAX_QUEUE_SIZE",
    ] + tlsEnvironmentVariables

    /// Applies the variables of `environment` (an empty value counts as unset,
    /// as the OpenTelemetry specification says); `file` labels errors. With
    /// `readKey` false (``SecretLoading/skip``) a client key file is not read.
    public mutating func applyEnvironment(_ environment: [String: String], file: String, readKey: Bool = true) throws(ConfigError) {
        func fail(_ key: String, _ variable: String, _ message: String) -> ConfigError {
            TracingConfig.environmentError(file: file, key: key, variable: variable, message)
        }
        func variable(_ names: String...) -> (name: String, value: String)? {
            TracingConfig.firstSet(names, in: environment)
        }

        if case let (name, value)? = variable("OTEL_TRACES_EXPORTER") {
            switch value.lowercased() {
            case "otlp": enabled = true
            case "none": enabled = false
            default: throw fail("enabled", name, "expected otlp or none (the gateway exports OTLP only), got '\(value)'")
            }
            environmentSources["enabled"] = name
        }
        if case let (name, value)? = variable("OTEL_SDK_DISABLED") {
            switch value.lowercased() {
            case "true":
                enabled = false
                environmentSources["enabled"] = name
            case "false": break
            default: throw fail("enabled", name, "expected true or false, got '\(value)'")
            }
        }
        guard enabled else { return }

        if case let (name, value)? = variable("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            endpoint = value
            environmentSources["endpoint"] = name
        } else if case let (name, value)? = variable("OTEL_EXPORTER_OTLP_ENDPOINT") {
            // The base URL of every signal: the traces' path is added to its path (as the specification says).
            endpoint = TracingConfig.signalEndpoint(base: value)
            environmentSources["endpoint"] = name
        }
        if case let (name, value)? = variable("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL") {
            guard let chosen = ExportProtocol(rawValue: value.lowercased()) else {
                throw fail("protocol", name, "expected http/protobuf or grpc, got '\(value)'")
            }
            exportProtocol = chosen
            environmentSources["protocol"] = name
        }
        if case let (name, value)? = variable("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS") {
            guard let pairs = TracingConfig.headerPairs(value) else {
                throw fail("headers", name, "expected comma-separated name=value pairs, values percent-encoded (values are not shown)")
            }
            headers = pairs.map { Header(name: $0.name, value: Secret(source: .env(name), value: $0.value)) }
            environmentSources["headers"] = name
        }
        if case let (name, value)? = variable("OTEL_SERVICE_NAME") {
            serviceName = value
            environmentSources["service_name"] = name
        }
        if case let (name, value)? = variable("OTEL_TRACES_SAMPLER") {
            guard let chosen = Sampler(rawValue: value.lowercased()) else {
                let names = Sampler.allCases.map(\.rawValue).joined(separator: ", ")
                throw fail("sampler", name, "expected one of: \(names); got '\(value)'")
            }
            sampler = chosen
            environmentSources["sampler"] = name
        }
        if sampler.usesRatio, case let (name, value)? = variable("OTEL_TRACES_SAMPLER_ARG") {
            guard let ratio = Double(value), (0...1).contains(ratio) else {
                throw fail("sampler_ratio", name, "expected a sampling ratio from 0 to 1, e.g. 0.25; got '\(value)'")
            }
            samplerRatio = ratio
            environmentSources["sampler_ratio"] = name
        }
        if case let (name, value)? = variable("OTEL_BSP_SCHEDULE_DELAY") {
            guard let milliseconds = Int(value), milliseconds >= 0 else {
                throw fail("schedule_delay", name, "expected milliseconds, e.g. 5000; got '\(value)'")
            }
            scheduleDelay = .milliseconds(milliseconds)
            environmentSources["schedule_delay"] = name
        }
        if case let (name, value)? = variable("OTEL_BSP_MAX_QUEUE_SIZE") {
            guard let size = Int(value), size >= 0 else {
                throw fail("max_queue", name, "expected a number of spans, e.g. 2048; got '\(value)'")
            }
            maxQueue = size
            environmentSources["max_queue"] = name
        }
        try applyTLSEnvironment(environment, file: file, readKey: readKey)
    }

    /// The error for `variable`, which sets `tracing.key`: its name, never its value.
    static func environmentError(file: String, key: String, variable: String, _ message: String) -> ConfigError {
        ConfigError(file: file, keyPath: "tracing.\(key)", message: "environment variable \(variable): \(message)")
    }

    /// The first of `names` set to a non-empty value in `environment`.
    static func firstSet(_ names: [String], in environment: [String: String]) -> (name: String, value: String)? {
        for name in names {
            if let value = environment[name], !value.isEmpty { return (name, value) }
        }
        return nil
    }

    /// `name=value,name2=value2` as the OpenTelemetry exporters read it: each pair split at its first `=`, both sides trimmed,
    /// the value then percent-decoded (the specification's format: `api-key=a%2Cb` is `a,b`);
    /// nil when a pair has no name or no value, or a value's `%` starts no valid escape.
    static func headerPairs(_ text: String) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for item in text.split(separator: ",") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: true)
            guard parts.count == 2 else { return nil }
            let name = parts[0].trimmingCharacters(in: .whitespacesAndNewlines)
            let encoded = parts[1].trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, !encoded.isEmpty, let value = encoded.removingPercentEncoding, !value.isEmpty else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }
}
