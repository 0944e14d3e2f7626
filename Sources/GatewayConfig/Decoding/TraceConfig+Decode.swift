/// Decoding of the top-level `trace`, `metrics` and `interception` sections.
/// Their file paths default to files under `state_dir`.
extension TraceConfig {
    init(decoding node: ConfigNode, stateDir: String) throws(ConfigError) {
        self.init(stateDir: stateDir)
        let map = try node.mapping(keys: [
            "file", "max_file_size", "max_files", "redact", "redact_headers", "redact_query", "redact_json_fields", "buffer",
        ])
        map.decode("file", into: &file) { try $0.nonEmptyString() }
        map.decode("max_file_size", into: &maxFileBytes) { try $0.size() }
        map.decode("max_files", into: &maxFiles) { try $0.int() }
        map.decode("redact", into: &redact) { try $0.bool() }
        map.decode("redact_headers", into: &redactHeaders) { try $0.names(of: "header names") }
        map.decode("redact_query", into: &redactQuery) { try $0.names(of: "query parameters") }
        map.decode("redact_json_fields", into: &redactJSONFields) { try $0.names(of: "JSON field names") }
        map.decode("buffer", into: &bufferRecords) { try $0.int() }
    }
}

extension MetricsConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["max_endpoints_per_upstream", "stats_window"])
        map.decode("max_endpoints_per_upstream", into: &maxEndpointsPerUpstream) { try $0.int() }
        map.decode("stats_window", into: &statsWindow) { try $0.duration() }
    }
}

extension InterceptionConfig {
    init(decoding node: ConfigNode, stateDir: String) throws(ConfigError) {
        self.init(stateDir: stateDir)
        let map = try node.mapping(keys: ["ca_cert", "ca_key", "leaf_cache_size"])
        map.decode("ca_cert", into: &caCert) { try $0.nonEmptyString() }
        map.decode("ca_key", into: &caKey) { try $0.nonEmptyString() }
        map.decode("leaf_cache_size", into: &leafCacheSize) { try $0.int() }
    }
}

extension ConfigNode {
    /// A list of non-empty strings (names); their syntax is checked by validation.
    func names(of what: String) throws(ConfigError) -> [String] {
        try elements(of: what) { try $0.nonEmptyString() }
    }
}
