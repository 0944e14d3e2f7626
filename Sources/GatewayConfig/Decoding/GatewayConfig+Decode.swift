import GatewayCore
import Logging

/// Decoding of the top level and of the small sections (`listen`, `limits`,
/// `pool`). Every key is optional; a null value means the default.
extension GatewayConfig {
    static let topLevelKeys = [
        "listen", "open", "log_level", "state_dir", "debug", "access", "proxy_auth", "limits", "pool", "upstreams",
        "trace", "metrics", "interception", "shared_state", "tracing",
    ]

    /// Every top-level key; a mistake in one is recorded and the others still read.
    init(decoding root: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try root.mapping(keys: GatewayConfig.topLevelKeys)
        map.decode("listen", into: &listen) { try ListenConfig(decoding: $0) }
        map.decode("open", into: &open) { try $0.bool() }
        map.decode("log_level", into: &logLevel) { try GatewayConfig.decodeLogLevel($0) }
        map.decode("state_dir", into: &stateDir) { try $0.nonEmptyString() }
        map.decode("debug", into: &debug) { try $0.bool() }
        map.decode("access", into: &access) { try AccessConfig(decoding: $0) }
        map.decode("proxy_auth", into: &proxyAuth) { try ProxyAuthConfig(decoding: $0) }
        map.decode("limits", into: &limits) { try ListenerLimits(decoding: $0) }
        map.decode("pool", into: &pool) { try PoolConfig(decoding: $0) }
        map.decode("upstreams", into: &upstreams) { try UpstreamConfig.decodeList($0) }
        // Paths not written default to files under the (decoded) state_dir.
        let stateDir = self.stateDir
        trace = map.decode("trace") { try TraceConfig(decoding: $0, stateDir: stateDir) } ?? TraceConfig(stateDir: stateDir)
        map.decode("metrics", into: &metrics) { try MetricsConfig(decoding: $0) }
        interception = map.decode("interception") { try InterceptionConfig(decoding: $0, stateDir: stateDir) }
            ?? InterceptionConfig(stateDir: stateDir)
        map.decode("shared_state", into: &sharedState) { try SharedStateConfig(decoding: $0) }
        map.decode("tracing", into: &tracing) { try TracingConfig(decoding: $0) }
    }

    static func decodeLogLevel(_ node: ConfigNode) throws(ConfigError) -> Logger.Level {
        Logger.Level(rawValue: try node.oneOf(Logger.Level.allCases.map(\.rawValue)))!
    }
}

extension ListenConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["proxy", "admin", "admin_hosts"])
        map.decode("proxy", into: &proxy) { try BindAddress(decoding: $0) }
        map.decode("admin", into: &admin) { try BindAddress(decoding: $0) }
        map.decode("admin_hosts", into: &adminHosts) { try $0.names(of: "host names") }
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
            "body_timeout", "send_timeout", "response_buffer", "max_client_connections", "max_connections_per_client", "tunnel_idle_timeout",
        ])
        map.decode("max_head_bytes", into: &maxHeadBytes) { try $0.size() }
        map.decode("header_timeout", into: &headerTimeout) { try $0.duration() }
        map.decode("idle_timeout", into: &idleTimeout) { try $0.duration() }
        map.decode("drain_timeout", into: &drainTimeout) { try $0.duration() }
        map.decode("body_timeout", into: &bodyTimeout) { try $0.duration() }
        map.decode("send_timeout", into: &sendTimeout) { try $0.duration() }
        map.decode("response_buffer", into: &responseBuffer) { try $0.size() }
        map.decode("max_client_connections", into: &maxClientConnections) { try $0.int() }
        map.decode("max_connections_per_client", into: &maxConnectionsPerClient) { try $0.int() }
        map.decode("tunnel_idle_timeout", into: &tunnelIdleTimeout) { try $0.duration() }
    }
}

extension PoolConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: [
            "max_connections_per_host", "idle_timeout", "connect_timeout", "request_timeout", "max_websockets_per_host",
        ])
        map.decode("max_websockets_per_host", into: &maxWebSocketsPerHost) { try $0.int() }
        map.decode("max_connections_per_host", into: &maxConnectionsPerHost) { try $0.int() }
        map.decode("idle_timeout", into: &idleTimeout) { try $0.duration() }
        map.decode("connect_timeout", into: &connectTimeout) { try $0.duration() }
        map.decode("request_timeout", into: &requestTimeout) { try $0.duration() }
    }
}

extension AccessConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["allow", "deny", "connect_ports"])
        map.decode("allow", into: &allow) { try $0.hostPatterns(allowRanges: true) }
        map.decode("deny", into: &deny) { try $0.hostPatterns(allowRanges: true) }
        map.decode("connect_ports", into: &connectPorts) { try $0.elements(of: "ports") { try $0.int() } }
    }
}

extension ConfigNode {
    /// A list of host patterns: `api.example.com`, `*.example.com`, `*`, an
    /// IP address, and with `allowRanges` (access rules) a CIDR range.
    func hostPatterns(allowRanges: Bool = false) throws(ConfigError) -> [HostPattern] {
        let expected = allowRanges
            ? "a host (api.example.com), a wildcard subdomain (*.example.com), *, an IP address or a CIDR range (10.0.0.0/8)"
            : "a host (api.example.com), a wildcard subdomain (*.example.com) or *"
        return try elements(of: "host patterns") { element throws(ConfigError) in
            let text = try element.string()
            guard let pattern = HostPattern(text), pattern.isAddressPattern || ConfigNode.isPlausibleHostPattern(text),
                allowRanges || !pattern.isRange
            else {
                throw element.error(
                    "not a host pattern: expected \(expected), got '\(text)'"
                )
            }
            return pattern
        }
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
