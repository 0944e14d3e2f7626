import GatewayCore

extension GatewayConfig {
    /// The effective config as YAML, in the same schema `ConfigLoader` reads,
    /// with every secret value left out: a secret from the environment or a
    /// file shows the variable name or path, an inline one `<redacted>`.
    /// Loading the output again (with the same environment) gives the same
    /// config, except inline passwords.
    public func redactedYAML() -> String {
        var out = YAMLLines()
        out.comment("Effective gateway configuration; secret values are redacted.")
        out.key("listen")
        out.indented { out in
            out.scalar("proxy", listen.proxy.description)
            out.scalar("admin", listen.admin.description)
            out.list("admin_hosts", listen.adminHosts)
        }
        out.plain("open", String(open))
        out.plain("log_level", logLevel.rawValue)
        out.scalar("state_dir", stateDir)
        out.plain("debug", String(debug))
        out.key("access")
        out.indented { out in
            out.list("allow", access.allow.map(\.description))
            out.list("deny", access.deny.map(\.description))
            out.flow("connect_ports", access.connectPorts.map(String.init))
        }
        if let proxyAuth {
            out.key("proxy_auth")
            out.indented { out in
                out.scalar("realm", proxyAuth.realm)
                out.key("users")
                out.indented { out in
                    for user in proxyAuth.users {
                        out.listItem { out in
                            out.scalar("username", user.username)
                            switch user.password.source {
                            case .env(let name): out.scalar("password_env", name, comment: "value <redacted>")
                            case .file(let path): out.scalar("password_file", path, comment: "value <redacted>")
                            case .inline: out.scalar("password", "<redacted>")
                            }
                        }
                    }
                }
            }
        }
        out.key("limits")
        out.indented { out in
            out.plain("max_head_bytes", ConfigUnits.formatSize(limits.maxHeadBytes))
            out.plain("header_timeout", ConfigUnits.formatDuration(limits.headerTimeout))
            out.plain("idle_timeout", ConfigUnits.formatDuration(limits.idleTimeout))
            out.plain("drain_timeout", ConfigUnits.formatDuration(limits.drainTimeout))
            out.plain("body_timeout", ConfigUnits.formatDuration(limits.bodyTimeout))
            out.plain("send_timeout", ConfigUnits.formatDuration(limits.sendTimeout))
            out.plain("response_buffer", ConfigUnits.formatSize(limits.responseBuffer))
            out.plain("max_client_connections", String(limits.maxClientConnections))
            out.plain("max_connections_per_client", String(limits.maxConnectionsPerClient))
            out.plain("tunnel_idle_timeout", ConfigUnits.formatDuration(limits.tunnelIdleTimeout))
        }
        out.key("pool")
        out.indented { out in
            out.plain("max_connections_per_host", String(pool.maxConnectionsPerHost))
            out.plain("idle_timeout", ConfigUnits.formatDuration(pool.idleTimeout))
            out.plain("connect_timeout", ConfigUnits.formatDuration(pool.connectTimeout))
            out.plain("request_timeout", ConfigUnits.formatDuration(pool.requestTimeout))
            out.plain("max_websockets_per_host", String(pool.maxWebSocketsPerHost))
        }
        writeObservability(to: &out)
        if upstreams.isEmpty {
            out.plain("upstreams", "[]")
        } else {
            out.key("upstreams")
            out.indented { out in
                for upstream in upstreams {
                    out.listItem { out in upstream.write(to: &out) }
                }
            }
        }
        return out.text
    }
}

extension GatewayConfig {
    fileprivate func writeObservability(to out: inout YAMLLines) {
        out.key("trace")
        out.indented { out in
            out.scalar("file", trace.file)
            out.plain("max_file_size", ConfigUnits.formatSize(trace.maxFileBytes))
            out.plain("max_files", String(trace.maxFiles))
            out.plain("redact", String(trace.redact))
            out.list("redact_headers", trace.redactHeaders)
            out.list("redact_query", trace.redactQuery)
            out.list("redact_json_fields", trace.redactJSONFields)
            out.plain("buffer", String(trace.bufferRecords))
        }
        out.key("metrics")
        out.indented { out in
            out.plain("max_endpoints_per_upstream", String(metrics.maxEndpointsPerUpstream))
            out.plain("stats_window", ConfigUnits.formatDuration(metrics.statsWindow))
        }
        out.key("interception")
        out.indented { out in
            out.scalar("ca_cert", interception.caCert)
            out.scalar("ca_key", interception.caKey)
            out.plain("leaf_cache_size", String(interception.leafCacheSize))
        }
        if let postgres = sharedState?.postgres {
            out.key("shared_state")
            out.indented { out in
                out.key("postgres")
                out.indented { out in
                    switch postgres.url.source {
                    case .env(let name): out.scalar("url_env", name, comment: "\(postgres.endpoint), password <redacted>")
                    case .file(let path): out.scalar("url_file", path, comment: "\(postgres.endpoint), password <redacted>")
                    case .inline: out.scalar("url", "<redacted>")
                    }
                    out.plain("tls", postgres.tls.rawValue)
                    if let caFile = postgres.caFile { out.scalar("ca_file", caFile) }
                    out.plain("on_unavailable", postgres.onUnavailable.rawValue)
                    out.plain("connect_timeout", ConfigUnits.formatDuration(postgres.connectTimeout))
                    out.plain("query_timeout", ConfigUnits.formatDuration(postgres.queryTimeout))
                    out.plain("max_connections", String(postgres.maxConnections))
                    out.plain("rate_limit_lease", ConfigUnits.formatDuration(postgres.rateLimitLease))
                    out.plain("sync_interval", ConfigUnits.formatDuration(postgres.syncInterval))
                }
            }
        }
        out.key("tracing")
        out.indented { out in tracing.write(to: &out) }
    }
}

/// A tiny block-style YAML writer for known shapes; strings are quoted
/// whenever a plain scalar could be misread.
struct YAMLLines {
    private(set) var lines: [String] = []
    private var indent = ""
    private var pendingItemPrefix: String?

    var text: String { lines.joined(separator: "\n") + "\n" }

    mutating func comment(_ text: String) { emit("# \(text)") }
    mutating func key(_ key: String) { emit("\(key):") }
    mutating func plain(_ key: String, _ value: String) { emit("\(key): \(value)") }

    mutating func scalar(_ key: String, _ value: String, comment: String? = nil) {
        emit("\(key): \(YAMLLines.quoted(value))" + (comment.map { "  # \($0)" } ?? ""))
    }

    mutating func list(_ key: String, _ values: [String]) {
        flow(key, values.map(YAMLLines.quoted))
    }

    mutating func flow(_ key: String, _ rendered: [String]) {
        emit("\(key): [\(rendered.joined(separator: ", "))]")
    }

    mutating func indented(_ body: (inout YAMLLines) -> Void) {
        let saved = indent
        indent += "  "
        body(&self)
        indent = saved
    }

    /// A `- ` list item whose first line carries the dash.
    mutating func listItem(_ body: (inout YAMLLines) -> Void) {
        let saved = indent
        pendingItemPrefix = indent + "- "
        indent += "  "
        body(&self)
        indent = saved
        pendingItemPrefix = nil
    }

    private mutating func emit(_ line: String) {
        if let prefix = pendingItemPrefix {
            lines.append(prefix + line)
            pendingItemPrefix = nil
        } else {
            lines.append(indent + line)
        }
    }

    /// `value` as a plain scalar when that reads back as the same string,
    /// else double-quoted with escapes.
    static func quoted(_ value: String) -> String {
        let reserved: Set<String> = ["true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"]
        let safe = value.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "/", "-", "+", "=", "@", ":": true
            default: false
            }
        }
        if safe, let first = value.unicodeScalars.first, first.properties.isAlphabetic || first == "/" || first == ".",
            !reserved.contains(value.lowercased()), !value.hasSuffix(":"), !value.contains("::")
        {
            return value
        }
        var result = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
