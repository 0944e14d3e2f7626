public import GatewayConfig
import GatewayCore

/// The trace's redaction for what leaves the gateway as telemetry (the
/// OpenTelemetry spans' URL attributes): stricter than the trace file's, and
/// always on.
extension TraceRedactor {
    /// The redactor of `config` with redaction on whatever `trace.redact`
    /// says: `redact: false` is for the local trace file only, never for an
    /// exporter's collector.
    public static func alwaysRedacting(config: GatewayConfig) -> TraceRedactor {
        var config = config
        config.trace.redact = true
        return TraceRedactor(config: config)
    }

    /// `target` (origin-form, `/path?query`) as telemetry shows it: as the
    /// exchange's log line shows it (``LoggedText/withoutQueryValues(_:)``,
    /// the same function), every query value dropped and its name kept
    /// (`/p?token=abc&sig=x&flag` → `/p?token=&sig=&flag`), then every secret
    /// value the gateway holds scrubbed from what is left (a token in the
    /// path). Not only the parameters the trace file redacts: a query value
    /// that names no secret by its name (`sig`, `password`, `X-Amz-Signature`)
    /// may still be one, and a collector is no place to find out.
    public func redactedTarget(_ target: String) -> String {
        scrub(LoggedText.withoutQueryValues(target))
    }
}
