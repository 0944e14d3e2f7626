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
        let bytes = target.utf8
        guard let q = bytes.firstIndex(of: UInt8(ascii: "?")) else { return scrub(target) }
        guard enabled else { return target }
        var query = bytes[bytes.index(after: q)...]
        if let hash = query.firstIndex(of: UInt8(ascii: "#")) { query = query[..<hash] }
        // Pair by pair in place (`split` makes an array of them).
        var start = query.startIndex
        while true {
            let end = query[start...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
            let pair = query[start..<end]
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(Substring(pair[..<equals]))
                if queryNames.contains(Self.decodedQueryName(name)) { return nil }
            }
            guard end != query.endIndex else { break }
            start = query.index(after: end)
        }
        var copy = target
        return copy.withUTF8 { containsSecret(UnsafeRawBufferPointer($0)) } ? nil : target
    }
}
