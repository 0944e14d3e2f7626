/// Decoding of the top-level `trace`, `metrics` and `interception` sections.
/// Their file paths default to files under `state_dir`.
extension TraceConfig {
    init(decoding node: ConfigNode, stateDir: String) throws(ConfigError) {
        self.init(stateDir: stateDir)
        let map = try node.mapping(keys: [
            "file", "max_file_size", "max_files", "redact", "redact_headers", "redact_query", "redact_json_fields", "buffer",
        ])
        if let value = map["file"] { file = try value.nonEmptyString() }
        if let value = map["max_file_size"] { maxFileBytes = try value.size() }
        if let value = map["max_files"] { maxFiles = try value.int() }
        if let value = map["redact"] { redact = try value.bool() }
        if let value = map["redact_headers"] { redactHeaders = try value.names(of: "header names") }
        if let value = map["redact_query"] { redactQuery = try value.names(of: "query parameters") }
        if let value = map["redact_json_fields"] { redactJSONFields = try value.names(of: "JSON field names") }
        if let value = map["buffer"] { bufferRecords = try value.int() }
    }
}

extension MetricsConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["max_endpoints_per_upstream", "stats_window"])
        if let value = map["max_endpoints_per_upstream"] { maxEndpointsPerUpstream = try value.int() }
        if let value = map["stats_window"] { statsWindow = try value.duration() }
    }
}

extension InterceptionConfig {
    init(decoding node: ConfigNode, stateDir: String) throws(ConfigError) {
        self.init(stateDir: stateDir)
        let map = try node.mapping(keys: ["ca_cert", "ca_key", "leaf_cache_size"])
        if let value = map["ca_cert"] { caCert = try value.nonEmptyString() }
        if let value = map["ca_key"] { caKey = try value.nonEmptyString() }
        if let value = map["leaf_cache_size"] { leafCacheSize = try value.int() }
    }
}

extension ConfigNode {
    /// A list of non-empty strings (names); their syntax is checked by validation.
    func names(of what: String) throws(ConfigError) -> [String] {
        var names: [String] = []
        for element in try sequence(of: what) {
            names.append(try element.nonEmptyString())
        }
        return names
    }
}
