public import GatewayCore

/// `access`: which hosts clients may reach through the gateway, and which
/// ports a `CONNECT` may open.
public struct AccessConfig: Sendable, Equatable {
    /// Hosts that may be reached; default `*` (any host).
    public var allow: [HostPattern]
    /// Hosts that may never be reached; a deny match wins over any allow match.
    public var deny: [HostPattern]
    /// Ports a `CONNECT` tunnel may reach; default 443 only.
    public var connectPorts: [Int]

    public static let defaultAllow: [HostPattern] = [HostPattern("*")!]
    public static let defaultConnectPorts: [Int] = [443]

    public init(
        allow: [HostPattern] = AccessConfig.defaultAllow,
        deny: [HostPattern] = [],
        connectPorts: [Int] = AccessConfig.defaultConnectPorts
    ) {
        self.allow = allow
        self.deny = deny
        self.connectPorts = connectPorts
    }

    /// True when `host` matches an `allow` pattern and no `deny` pattern.
    /// Case-insensitive; a trailing dot (`example.com.`) is ignored, and an
    /// IPv6 literal may be given with or without brackets.
    public func isAllowed(host: String) -> Bool {
        let normalized = AccessConfig.normalize(host)
        guard !normalized.isEmpty else { return false }
        if deny.contains(where: { $0.matches(normalized) }) { return false }
        return allow.contains(where: { $0.matches(normalized) })
    }

    /// True when a `CONNECT` to `port` is permitted.
    public func allowsConnect(port: Int) -> Bool {
        connectPorts.contains(port)
    }

    static func normalize(_ host: String) -> String {
        var text = Substring(host.lowercased())
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        while text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }
}
