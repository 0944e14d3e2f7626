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
        if let unchanged = unchangedTarget(target) { return unchanged }
        var text = ""
        text.reserveCapacity(target.utf8.count + 16)
        for part in url(prefix: "", target: target) {
            switch part {
            case .literal(let literal): text += literal
            case .variable: text += "REDACTED"
            }
        }
        return text
    }

    /// What ``redactedTarget(_:)`` makes of `target` when that is cheap to
    /// know, nil otherwise: without a query, ``url(prefix:target:)`` shows
    /// it scrubbed (``scrub(_:)``, itself a byte search); with one, when no
    /// parameter with a value is a redacted one and no secret value occurs in
    /// the whole target (so in none of its parts), every part is kept as it
    /// was and the target comes out unchanged.
    func unchangedTarget(_ target: String) -> String? {
        var bytes = target
        // By bytes through a pointer: the string's own indices go through its generic collection code.
        let verdict = bytes.withUTF8 { utf8 -> TargetVerdict in
            let raw = UnsafeRawBufferPointer(utf8)
            guard let q = raw.firstIndex(of: UInt8(ascii: "?")) else { return .noQuery }
            guard enabled else { return .unchanged }
            let query = raw[(q + 1)...]
            let end = query.firstIndex(of: UInt8(ascii: "#")) ?? raw.endIndex
            var start = q + 1
            while true {
                let pairEnd = raw[start..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
                if let equals = raw[start..<pairEnd].firstIndex(of: UInt8(ascii: "=")) {
                    let name = String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<equals]), as: UTF8.self)
                    if queryNames.contains(Self.decodedQueryName(name)) { return .changed }
                }
                guard pairEnd != end else { break }
                start = pairEnd + 1
            }
            return containsSecret(raw) ? .changed : .unchanged
        }
        switch verdict {
        case .noQuery: return scrub(target)
        case .unchanged: return target
        case .changed: return nil
        }
    }

    /// What ``unchangedTarget(_:)`` finds of a target.
    private enum TargetVerdict {
        /// No query: scrubbing is what changes it, if anything.
        case noQuery
        case unchanged
        /// A redacted parameter or a secret: the general path makes it.
        case changed
    }
}
