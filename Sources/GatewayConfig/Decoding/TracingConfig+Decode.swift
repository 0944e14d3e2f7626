import GatewayCore

/// Decoding of the top-level `tracing` section. The OpenTelemetry variables
/// apply after the whole file is read (`TracingConfig+Environment.swift`), so
/// they also apply to a file without the section.
extension TracingConfig {
    static let keys = [
        "enabled", "endpoint", "protocol", "headers", "service_name", "sampler", "sampler_ratio", "schedule_delay", "max_queue", "tls",
    ]

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: TracingConfig.keys)
        map.decode("enabled", into: &enabled) { try $0.bool() }
        map.decode("endpoint", into: &endpoint) { try $0.nonEmptyString() }
        map.decode("protocol", into: &exportProtocol) { try $0.choice(TracingConfig.ExportProtocol.self) }
        map.decode("headers", into: &headers) { try $0.elements(of: "headers") { try TracingConfig.Header(decoding: $0) } }
        map.decode("service_name", into: &serviceName) { try $0.nonEmptyString() }
        map.decode("sampler", into: &sampler) { try $0.choice(TracingConfig.Sampler.self) }
        map.decode("sampler_ratio", into: &samplerRatio) { try $0.number() }
        map.decode("schedule_delay", into: &scheduleDelay) { try $0.duration() }
        map.decode("max_queue", into: &maxQueue) { try $0.int() }
        map.decode("tls", into: &tls) { try UpstreamTLSSettings(decoding: $0) }
    }
}

extension TracingConfig.Header {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["name"] + Secret.keys("value"))
        guard let name = map["name"] else {
            throw node.error("expected a name and one of value_env, value_file, value ({name: X-API-Key, value_env: OTLP_API_KEY})")
        }
        self.init(name: try name.nonEmptyString(), value: Secret.required(from: map, base: "value"))
    }
}
