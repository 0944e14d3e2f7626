public import GatewayConfig

/// The trace's redaction for what leaves the gateway as telemetry (the
/// OpenTelemetry spans' URL attributes): the same rules, always on.
extension TraceRedactor {
    /// The redactor of `config` with redaction on whatever `trace.redact`
    /// says: `redact: false` is for the local trace file only, never for an
    /// exporter's collector.
    public static func alwaysRedacting(config: GatewayConfig) -> TraceRedactor {
        var config = config
        config.trace.redact = true
        return TraceRedactor(config: config)
    }

    /// `target` (origin-form, `/path?query`) as telemetry shows it: the values
    /// of redacted query parameters (`token`, `api_key`, every upstream's auth
    /// parameter, `trace.redact_query`) as `REDACTED`, every secret value the
    /// gateway holds scrubbed; the rest as it was.
    public func redactedTarget(_ target: String) -> String {
        var text = ""
        for part in url(prefix: "", target: target) {
            switch part {
            case .literal(let literal): text += literal
            case .variable: text += "REDACTED"
            }
        }
        return text
    }
}
