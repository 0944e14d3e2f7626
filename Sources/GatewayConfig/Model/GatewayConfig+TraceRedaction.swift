/// What traces must redact, all in one place: the built-in lists,
/// `trace.redact_*`, and every header or query parameter an upstream's
/// `auth` sets. Names are lower-cased (compare case-insensitively).
extension GatewayConfig {
    /// Header names whose values traces replace with placeholders.
    public var redactedHeaderNames: Set<String> {
        var names = Set((TraceConfig.builtInRedactHeaders + trace.redactHeaders).map { $0.lowercased() })
        for upstream in upstreams {
            if case .header(let name, _) = upstream.auth?.kind { names.insert(name.lowercased()) }
        }
        return names
    }

    /// Query parameters whose values traces replace with placeholders.
    public var redactedQueryParameters: Set<String> {
        var names = Set((TraceConfig.builtInRedactQuery + trace.redactQuery).map { $0.lowercased() })
        for upstream in upstreams {
            if case .query(let parameter, _) = upstream.auth?.kind { names.insert(parameter.lowercased()) }
        }
        return names
    }

    /// JSON body fields (at any depth) whose values traces replace with placeholders.
    public var redactedJSONFields: Set<String> {
        Set((TraceConfig.builtInRedactJSONFields + trace.redactJSONFields).map { $0.lowercased() })
    }
}
