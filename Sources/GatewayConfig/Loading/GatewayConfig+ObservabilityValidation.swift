/// Checks of the `trace`, `metrics` and `interception` sections.
extension GatewayConfig {
    func validateObservability(_ fail: (String, String) -> Void) {
        validateTrace(fail)
        let maxEndpoints = MetricsConfig.maxEndpointsLimit
        if !(1...maxEndpoints).contains(metrics.maxEndpointsPerUpstream) {
            fail(
                "metrics.max_endpoints_per_upstream",
                "must be between 1 and \(maxEndpoints), got \(metrics.maxEndpointsPerUpstream)")
        }
        if metrics.statsWindow <= .zero {
            fail("metrics.stats_window", "must be greater than 0, got \(ConfigUnits.formatDuration(metrics.statsWindow))")
        }
        for (key, path) in [("interception.ca_cert", interception.caCert), ("interception.ca_key", interception.caKey)] {
            GatewayConfig.checkPath(path, key: key, fail)
        }
        if interception.caCert == interception.caKey {
            fail("interception.ca_key", "must differ from ca_cert (\(interception.caCert))")
        }
        if interception.leafCacheSize < 1 {
            fail("interception.leaf_cache_size", "must be at least 1, got \(interception.leafCacheSize)")
        }
    }

    private func validateTrace(_ fail: (String, String) -> Void) {
        GatewayConfig.checkPath(trace.file, key: "trace.file", fail)
        if trace.maxFileBytes < TraceConfig.minFileBytes {
            fail("trace.max_file_size", "must be at least 1KiB, got \(ConfigUnits.formatSize(trace.maxFileBytes))")
        }
        if trace.maxFiles < 1 { fail("trace.max_files", "must be at least 1, got \(trace.maxFiles)") }
        if trace.bufferRecords < 1 { fail("trace.buffer", "must be at least 1, got \(trace.bufferRecords)") }
        for (index, name) in trace.redactHeaders.enumerated()
        where name.isEmpty || !name.unicodeScalars.allSatisfy(EndpointTemplate.isTokenCharacter) {
            fail("trace.redact_headers[\(index)]", "not a valid header name: '\(name)'")
        }
        let lists = [("trace.redact_query", trace.redactQuery), ("trace.redact_json_fields", trace.redactJSONFields)]
        for (key, names) in lists {
            for (index, name) in names.enumerated() where name.isEmpty || AuthConfig.hasControlCharacter(name) {
                fail("\(key)[\(index)]", name.isEmpty ? "must not be empty" : "must not contain control characters")
            }
        }
    }

    static func checkPath(_ path: String, key: String, _ fail: (String, String) -> Void) {
        if path.isEmpty { fail(key, "must not be empty") }
        if path.unicodeScalars.contains(where: { $0.value == 0 }) || path.hasSuffix("/") {
            fail(key, "must be a file path")
        }
    }
}
