/// The `tracing` section of `redactedYAML()`: the effective values, those an
/// OpenTelemetry variable set marked `# from OTEL_...`; header values never
/// shown. The dump loads back to the same config in the same environment:
/// headers from `OTEL_EXPORTER_OTLP_HEADERS` are named in a comment only (the
/// variable sets them again).
extension TracingConfig {
    func write(to out: inout YAMLLines) {
        func from(_ key: String) -> String? { environmentSources[key].map { "from \($0)" } }
        out.plain("enabled", String(enabled) + (from("enabled").map { "  # \($0)" } ?? ""))
        // A key in the collector's URL is a secret too: its query's values are not shown.
        let shown = shownEndpoint
        let comments = [from("endpoint"), shown == endpoint ? nil : "query values not shown"].compactMap { $0 }
        out.scalar("endpoint", shown, comment: comments.isEmpty ? nil : comments.joined(separator: "; "))
        out.plain("protocol", exportProtocol.rawValue + (from("protocol").map { "  # \($0)" } ?? ""))
        if let variable = environmentSources["headers"] {
            let names = headers.map(\.name).joined(separator: ", ")
            out.plain("headers", "[]  # from \(variable): \(names) (values <redacted>)")
        } else if headers.isEmpty {
            out.plain("headers", "[]")
        } else {
            out.key("headers")
            out.indented { out in
                for header in headers {
                    out.listItem { out in
                        out.scalar("name", header.name)
                        out.secret("value", header.value)
                    }
                }
            }
        }
        out.scalar("service_name", serviceName, comment: from("service_name"))
        out.plain("sampler", sampler.rawValue + (from("sampler").map { "  # \($0)" } ?? ""))
        out.plain("sampler_ratio", ConfigUnits.formatNumber(samplerRatio) + (from("sampler_ratio").map { "  # \($0)" } ?? ""))
        out.plain("schedule_delay", ConfigUnits.formatDuration(scheduleDelay) + (from("schedule_delay").map { "  # \($0)" } ?? ""))
        out.plain("max_queue", String(maxQueue) + (from("max_queue").map { "  # \($0)" } ?? ""))
        if tls != .standard {
            for key in ["tls.ca_file", "tls.client_certificate"] {
                if let variable = environmentSources[key] { out.comment("\(key) from \(variable)") }
            }
            out.key("tls")
            out.indented { out in tls.write(to: &out, withPinMode: false) }
        }
    }
}
