import Foundation

/// Checks of the `tracing` section. A value an OpenTelemetry variable set is
/// named in the error with its variable; such values only exist while tracing
/// is on (``TracingConfig/applyEnvironment(_:file:)`` reads none otherwise).
extension GatewayConfig {
    func validateTracing(_ fail: (String, String) -> Void) {
        let tracing = self.tracing
        func failing(_ key: String, _ message: String) {
            let source = tracing.environmentSources[key].map { " (set by \($0))" } ?? ""
            fail("tracing.\(key)", message + source)
        }
        if let problem = TracingConfig.endpointProblem(tracing.endpoint) {
            failing("endpoint", problem)
        }
        if tracing.serviceName.isEmpty || AuthConfig.hasControlCharacter(tracing.serviceName) {
            failing("service_name", tracing.serviceName.isEmpty ? "must not be empty" : "must not contain control characters")
        }
        if !(0...1).contains(tracing.samplerRatio) {
            failing("sampler_ratio", "must be between 0 and 1, got \(ConfigUnits.formatNumber(tracing.samplerRatio))")
        }
        if tracing.scheduleDelay <= .zero {
            failing("schedule_delay", "must be greater than 0, got \(ConfigUnits.formatDuration(tracing.scheduleDelay))")
        }
        if !(1...TracingConfig.maxQueueLimit).contains(tracing.maxQueue) {
            failing("max_queue", "must be between 1 and \(TracingConfig.maxQueueLimit), got \(tracing.maxQueue)")
        }
        let fromEnvironment = tracing.environmentSources["headers"] != nil
        for (index, header) in tracing.headers.enumerated() {
            // From the variable the headers have no index of their own to name.
            let key = fromEnvironment ? "headers" : "headers[\(index)]"
            if header.name.isEmpty || !header.name.unicodeScalars.allSatisfy(EndpointTemplate.isTokenCharacter) {
                failing(key, "not a valid header name: '\(header.name)'")
            }
            if header.value.value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) {
                failing(key, "the value of \(header.name) contains control characters (\(header.value))")
            }
        }
    }

    /// Notes about a valid `tracing` section (``warnings``).
    var tracingWarnings: [String] {
        var notes: [String] = []
        for (index, header) in tracing.headers.enumerated() where header.value.source == .inline {
            notes.append("tracing.headers[\(index)]: secret written inline in the config file; prefer value_env or value_file")
        }
        if let note = tracing.tls.clientCertificate?.expiryNote() {
            notes.append("tracing.tls.client_certificate: \(note)")
        }
        if tracing.enabled, !tracing.headers.isEmpty, let url = URL(string: tracing.endpoint), url.scheme?.lowercased() == "http",
            let host = url.host, !BindAddress(host: host, port: 0).isLoopback, host.lowercased() != "localhost"
        {
            notes.append("tracing.endpoint: plain http sends the exporter's headers (\(tracing.headers.map(\.name).joined(separator: ", "))) unencrypted")
        }
        return notes
    }
}

extension TracingConfig {
    /// Why `endpoint` cannot be exported to, or nil: an `http://` or
    /// `https://` URL with a host and no credentials (those go in `headers`).
    static func endpointProblem(_ endpoint: String) -> String? {
        // Not echoed when it may hold a user and password.
        let shown = endpoint.contains("@") ? "<not shown: it holds an @>" : shownEndpoint(endpoint)
        let expected = "expected an http:// or https:// URL such as http://127.0.0.1:4318/v1/traces, got '\(shown)'"
        guard let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return expected
        }
        guard let host = url.host, !host.isEmpty else { return expected }
        if url.user != nil || url.password != nil {
            return "must not hold credentials: give them as tracing.headers (value_env) instead"
        }
        if endpoint.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) {
            return "must not contain spaces or control characters"
        }
        return nil
    }
}
