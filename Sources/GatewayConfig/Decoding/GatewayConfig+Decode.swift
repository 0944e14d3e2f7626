import GatewayCore
import Logging

/// Decoding of the top level and of the small sections (`listen`, `limits`,
/// `pool`). Every key is optional; a null value means the default.
extension GatewayConfig {
    static let topLevelKeys = [
        "listen", "open", "log_level", "state_dir", "debug", "access", "proxy_auth", "limits", "pool", "upstreams",
        "trace", "metrics", "interception", "shared_state", "tracing",
    ]

    init(decoding root: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try root.mapping(keys: GatewayConfig.topLevelKeys)
        if let node = map["listen"] { listen = try ListenConfig(decoding: node) }
        if let node = map["open"] { open = try node.bool() }
        if let node = map["log_level"] { logLevel = try GatewayConfig.decodeLogLevel(node) }
        if let node = map["state_dir"] { stateDir = try node.nonEmptyString() }
        if let node = map["debug"] { debug = try node.bool() }
        if let node = map["access"] { access = try AccessConfig(decoding: node) }
        if let node = map["proxy_auth"] { proxyAuth = try ProxyAuthConfig(decoding: node) }
        if let node = map["limits"] { limits = try ListenerLimits(decoding: node) }
        if let node = map["pool"] { pool = try PoolConfig(decoding: node) }
        if let node = map["upstreams"] {
            upstreams = []
            for element in try node.sequence(of: "upstreams") {
                upstreams.append(try UpstreamConfig(decoding: element))
            }
        }
        // Paths not written default to files under the (decoded) state_dir.
        trace = try map["trace"].map { node throws(ConfigError) in try TraceConfig(decoding: node, stateDir: stateDir) }
            ?? TraceConfig(stateDir: stateDir)
        if let node = map["metrics"] { metrics = try MetricsConfig(decoding: node) }
        interception = try map["interception"].map { node throws(ConfigError) in
            try InterceptionConfig(decoding: node, stateDir: stateDir)
        } ?? InterceptionConfig(stateDir: stateDir)
        if let node = map["shared_state"], !node.isNull { sharedState = try SharedStateConfig(decoding: node) }
        if let node = map["tracing"] { tracing = try TracingConfig(decoding: node) }
    }

    static func decodeLogLevel(_ node: ConfigNode) throws(ConfigError) -> Logger.Level {
        let text = try node.string()
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            let names = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
            throw node.error("expected one of: \(names); got '\(text)'")
        }
        return level
    }
}

extension ListenConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["proxy", "admin", "admin_hosts"])
        if let value = map["proxy"] { proxy = try BindAddress(decoding: value) }
        if let value = map["admin"] { admin = try BindAddress(decoding: value) }
        if let value = map["admin_hosts"] { adminHosts = try value.names(of: "host names") }
    }
}

extension BindAddress {
    init(decoding node: ConfigNode) throws(ConfigError) {
        if case .sequence = node.node {
            throw node.error("expected host:port; an IPv6 address must be quoted: \"[::1]:8080\"")
        }
        let text = try node.string()
        switch BindAddress.parse(text) {
        case .success(let address): self = address
        case .failure(let problem): throw node.error("\(problem.message), got '\(text)'")
        }
    }
}

extension ListenerLimits {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: [
            "max_head_bytes", "header_timeout", "idle_timeout", "drain_timeout",
            "body_timeout", "send_timeout", "max_client_connections", "max_connections_per_client", "tunnel_idle_timeout",
        ])
        if let value = map["max_head_bytes"] { maxHeadBytes = try value.size() }
        if let value = map["header_timeout"] { headerTimeout = try value.duration() }
        if let value = map["idle_timeout"] { idleTimeout = try value.duration() }
        if let value = map["drain_timeout"] { drainTimeout = try value.duration() }
        if let value = map["body_timeout"] { bodyTimeout = try value.duration() }
        if let value = map["send_timeout"] { sendTimeout = try value.duration() }
        if let value = map["max_client_connections"] { maxClientConnections = try value.int() }
        if let value = map["max_connections_per_client"] { maxConnectionsPerClient = try value.int() }
        if let value = map["tunnel_idle_timeout"] { tunnelIdleTimeout = try value.duration() }
    }
}

extension PoolConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: [
            "max_connections_per_host", "idle_timeout", "connect_timeout", "request_timeout",
        ])
        if let value = map["max_connections_per_host"] { maxConnectionsPerHost = try value.int() }
        if let value = map["idle_timeout"] { idleTimeout = try value.duration() }
        if let value = map["connect_timeout"] { connectTimeout = try value.duration() }
        if let value = map["request_timeout"] { requestTimeout = try value.duration() }
    }
}

extension AccessConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["allow", "deny", "connect_ports"])
        if let value = map["allow"] { allow = try value.hostPatterns(allowRanges: true) }
        if let value = map["deny"] { deny = try value.hostPatterns(allowRanges: true) }
        if let value = map["connect_ports"] {
            connectPorts = []
            for element in try value.sequence(of: "ports") {
                connectPorts.append(try element.int())
            }
        }
    }
}

extension ConfigNode {
    /// A list of host patterns: `api.example.com`, `*.example.com`, `*`, an
    /// IP address, and with `allowRanges` (access rules) a CIDR range.
    func hostPatterns(allowRanges: Bool = false) throws(ConfigError) -> [HostPattern] {
        var patterns: [HostPattern] = []
        for element in try sequence(of: "host patterns") {
            let text = try element.string()
            let expected = allowRanges
                ? "a host (api.example.com), a wildcard subdomain (*.example.com), *, an IP address or a CIDR range (10.0.0.0/8)"
                : "a host (api.example.com), a wildcard subdomain (*.example.com) or *"
            guard let pattern = HostPattern(text), pattern.isAddressPattern || ConfigNode.isPlausibleHostPattern(text),
                allowRanges || !pattern.isRange
            else {
                throw element.error(
                    "not a host pattern: expected \(expected), got '\(text)'"
                )
            }
            patterns.append(pattern)
        }
        return patterns
    }

    /// Stricter than `HostPattern.init`: the part after an optional `*.` must
    /// be a host name or an IP address (so `api.example.com:443` is refused).
    static func isPlausibleHostPattern(_ text: String) -> Bool {
        if text == "*" { return true }
        let host = text.hasPrefix("*.") ? String(text.dropFirst(2)) : text
        if IPAddress.isNonCanonicalIPv4(host) { return false }
        return IPAddressText.isHostname(host) || IPAddressText.ipv6Bytes(host) != nil
    }
}
