import GatewayCore

/// Checks across values and ranges, run after decoding. Public so that a
/// config changed in code (e.g. a `--listen` flag) can be checked again.
extension GatewayConfig {
    /// Throws every rule this config breaks, each with the key path of the
    /// offending value; `file` only labels the error.
    public func validate(file: String = "<config>") throws(ConfigError) {
        let issues = ConfigIssueCollector(file: file)
        validate(into: issues)
        if let error = issues.error { throw error }
    }

    /// Records every rule this config breaks in `issues` (which drops those
    /// about values decoding could not read: their defaults stand in for them).
    func validate(into issues: ConfigIssueCollector) {
        func fail(_ keyPath: String, _ message: String) {
            issues.fail(keyPath, message)
        }
        for (key, address) in [("listen.proxy", listen.proxy), ("listen.admin", listen.admin)] where !(0...65535).contains(address.port) {
            fail(key, "port must be an integer from 0 to 65535, got \(address.port)")
        }
        if listen.proxy.port != 0, listen.proxy.port == listen.admin.port, listen.proxy.overlaps(listen.admin) {
            fail("listen.admin", "\(listen.admin) is also the proxy's address (listen.proxy): give the admin listener another port")
        }
        for (index, host) in listen.adminHosts.enumerated() where !GatewayConfig.isAdminHost(host) {
            fail(
                "listen.admin_hosts[\(index)]",
                "expected a host name or an IP address without a port (gateway-1, 10.0.0.5, \"[fd00::5]\"), got '\(host)'")
        }
        validateSafety(fail)
        validateAccess(fail)
        if let proxyAuth { GatewayConfig.validate(proxyAuth, fail) }
        validateLimits(fail)
        validateObservability(fail)
        validateSharedState(fail)
        validateTracing(fail)
        validateUpstreams(fail)
    }

    /// A name the admin listener may answer for: a host name, a dotted-quad
    /// IPv4 address or an IPv6 address (with or without brackets); no port, no wildcard.
    private static func isAdminHost(_ host: String) -> Bool {
        if IPAddress.isNonCanonicalIPv4(host) { return false }
        return IPAddressText.isHostname(host) || IPAddressText.bytes(host) != nil
    }

    /// Never an open proxy by accident.
    private func validateSafety(_ fail: (String, String) -> Void) {
        if !listen.proxy.isLoopback && proxyAuth == nil && !open {
            fail(
                "listen.proxy",
                "refusing to listen on \(listen.proxy) without proxy_auth: that would be an open proxy; set open: true to allow it explicitly"
            )
        }
    }

    private func validateAccess(_ fail: (String, String) -> Void) {
        if access.connectPorts.isEmpty {
            fail("access.connect_ports", "must list at least one port (443 is the usual one)")
        }
        for (index, port) in access.connectPorts.enumerated() where !(1...65535).contains(port) {
            fail("access.connect_ports[\(index)]", "port must be an integer from 1 to 65535, got \(port)")
        }
    }

    private static func validate(_ auth: ProxyAuthConfig, _ fail: (String, String) -> Void) {
        if auth.realm.isEmpty { fail("proxy_auth.realm", "must not be empty") }
        if auth.realm.contains(where: { $0 == "\"" || $0 == "\\" || $0.isNewline || ($0.asciiValue ?? 32) < 32 }) {
            fail("proxy_auth.realm", "must not contain quotes, backslashes or control characters")
        }
        if auth.users.isEmpty { fail("proxy_auth.users", "at least one user is required") }
        var seen: Set<String> = []
        for (index, user) in auth.users.enumerated() {
            let key = "proxy_auth.users[\(index)].username"
            if user.username.isEmpty { fail(key, "must not be empty") }
            if user.username.contains(":") { fail(key, "must not contain ':' (Basic auth separates user and password with it)") }
            if !seen.insert(user.username).inserted { fail(key, "duplicate username '\(user.username)'") }
            if user.password.value.isEmpty { fail("proxy_auth.users[\(index)]", "password must not be empty") }
        }
    }

    private func validateLimits(_ fail: (String, String) -> Void) {
        let minimum = ListenerLimits.minHeadBytes, maximum = ListenerLimits.maxHeadBytesLimit
        if !(minimum...maximum).contains(limits.maxHeadBytes) {
            fail("limits.max_head_bytes", "must be between 1KiB and 1MiB, got \(ConfigUnits.formatSize(limits.maxHeadBytes))")
        }
        if !ListenerLimits.responseBufferRange.contains(limits.responseBuffer) {
            fail("limits.response_buffer", "must be between 16KiB and 16MiB, got \(ConfigUnits.formatSize(limits.responseBuffer))")
        }
        let timeouts: [(String, Duration)] = [
            ("limits.header_timeout", limits.headerTimeout),
            ("limits.idle_timeout", limits.idleTimeout),
            ("limits.drain_timeout", limits.drainTimeout),
            ("limits.body_timeout", limits.bodyTimeout),
            ("limits.send_timeout", limits.sendTimeout),
            ("limits.tunnel_idle_timeout", limits.tunnelIdleTimeout),
            ("pool.idle_timeout", pool.idleTimeout),
            ("pool.connect_timeout", pool.connectTimeout),
            ("pool.request_timeout", pool.requestTimeout),
        ]
        for (key, duration) in timeouts where duration <= .zero {
            fail(key, "must be greater than 0, got \(ConfigUnits.formatDuration(duration))")
        }
        if limits.maxClientConnections < 1 {
            fail("limits.max_client_connections", "must be at least 1, got \(limits.maxClientConnections)")
        }
        if limits.maxConnectionsPerClient < 1 {
            fail("limits.max_connections_per_client", "must be at least 1, got \(limits.maxConnectionsPerClient)")
        }
        if pool.maxConnectionsPerHost < 1 {
            fail("pool.max_connections_per_host", "must be at least 1, got \(pool.maxConnectionsPerHost)")
        }
        if pool.maxWebSocketsPerHost < 1 {
            fail("pool.max_websockets_per_host", "must be at least 1, got \(pool.maxWebSocketsPerHost)")
        }
    }

    private func validateUpstreams(_ fail: (String, String) -> Void) {
        var firstIndexByName: [String: Int] = [:]
        for (index, upstream) in upstreams.enumerated() {
            let prefix = "upstreams[\(index)]"
            if upstream.name.isEmpty { fail("\(prefix).name", "must not be empty") }
            if !upstream.name.unicodeScalars.allSatisfy(GatewayConfig.isNameCharacter) {
                fail("\(prefix).name", "must contain only letters, digits, '-' and '_', got '\(upstream.name)'")
            }
            if let first = firstIndexByName[upstream.name] {
                fail("\(prefix).name", "duplicate upstream name '\(upstream.name)' (also upstreams[\(first)])")
            } else {
                firstIndexByName[upstream.name] = index
            }
            if upstream.hosts.isEmpty { fail("\(prefix).hosts", "must list at least one host pattern") }
            if let origin = upstream.origin, !(1...65535).contains(origin.port) {
                fail("\(prefix).origin", "port must be an integer from 1 to 65535, got \(origin.port)")
            }
            upstream.validateFeatures(prefix: prefix, maxEndpoints: metrics.maxEndpointsPerUpstream, fail)
        }
    }

    private static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_": true
        default: false
        }
    }
}
