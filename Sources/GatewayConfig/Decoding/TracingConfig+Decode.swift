/// Decoding of the top-level `tracing` section. The OpenTelemetry variables
/// apply after the whole file is read (`TracingConfig+Environment.swift`), so
/// they also apply to a file without the section.
extension TracingConfig {
    static let keys = [
        "enabled", "endpoint", "protocol", "headers", "service_name", "sampler", "sampler_ratio", "schedule_delay", "max_queue",
    ]

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: TracingConfig.keys)
        if let value = map["enabled"] { enabled = try value.bool() }
        if let value = map["endpoint"] { endpoint = try value.nonEmptyString() }
        if let value = map["protocol"] { exportProtocol = try value.choice(TracingConfig.ExportProtocol.self) }
        if let value = map["headers"] {
            for element in try value.sequence(of: "headers") {
                headers.append(try TracingConfig.Header(decoding: element))
            }
        }
        if let value = map["service_name"] { serviceName = try value.nonEmptyString() }
        if let value = map["sampler"] { sampler = try value.choice(TracingConfig.Sampler.self) }
        if let value = map["sampler_ratio"] { samplerRatio = try value.number() }
        if let value = map["schedule_delay"] { scheduleDelay = try value.duration() }
        if let value = map["max_queue"] { maxQueue = try value.int() }
    }
}

extension TracingConfig.Header {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["name"] + Secret.keys("value"))
        guard let name = map["name"] else {
            throw node.error("expected a name and one of value_env, value_file, value ({name: X-API-Key, value_env: OTLP_API_KEY})")
        }
        self.init(name: try name.nonEmptyString(), value: try Secret(decodingFrom: node, map, base: "value"))
    }
}
