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
    /// IPv6 literal may be given with or without brackets. IP addresses match
    /// as addresses (``HostPattern``): `0::1` is `::1`, `[::ffff:127.0.0.2]` is
    /// `127.0.0.2`, and an IPv4 `deny` rule also refuses the NAT64 and
    /// IPv4-compatible addresses carrying its addresses (`64:ff9b::127.0.0.2`,
    /// `::127.0.0.2`; ``HostPattern/matchesAsDenyRule(_:)``), which `allow`
    /// rules do not match. A host a resolver would read as an IPv4 address written
    /// another way (`2130706434`, `127.2`, `0x7f000002`, `0177.0.0.2`) is never allowed.
    ///
    /// A scan of the rules: the reference of ``AccessIndex``, which the
    /// request path reads instead (built once per load).
    public func isAllowed(host: String) -> Bool {
        guard !IPAddress.isNonCanonicalIPv4(host) else { return false }
        let normalized = AccessConfig.normalize(host)
        guard !normalized.isEmpty else { return false }
        if deny.isEmpty, allow.contains(where: \.isWildcard) { return true }
        if deny.contains(where: { $0.matchesAsDenyRule(normalized) }) { return false }
        return allow.contains(where: { $0.matches(normalized) })
    }

    /// The check of the address actually connected to (after resolution), so
    /// a name that resolves to a denied address is denied too: false when
    /// `address` (`127.0.0.1`, `::1`, `[::ffff:10.0.0.1]`, `64:ff9b::10.0.0.1`)
    /// lies in a `deny` IP or CIDR rule (``HostPattern/matchesAsDenyRule(address:)``),
    /// or is not an IP address at all. Name patterns and `allow`
    /// take no part: the target host was checked against them already
    /// (``isAllowed(host:)``). Pure and synchronous: a connector may call it
    /// on its event loop with `SocketAddress.ipAddress`. A scan, as
    /// ``isAllowed(host:)``; ``AccessIndex`` gives the same answer.
    public func isAllowed(address: String) -> Bool {
        guard let ip = IPAddress(address) else { return false }
        return !deny.contains { $0.matchesAsDenyRule(address: ip) }
    }

    /// True when a `CONNECT` to `port` is permitted.
    public func allowsConnect(port: Int) -> Bool {
        connectPorts.contains(port)
    }

    static func normalize(_ host: String) -> String {
        // Already normal (the common case): no copy.
        if host.utf8.first != UInt8(ascii: "["), host.utf8.last != UInt8(ascii: "."),
            !HTTPFieldBytes.hasUppercase(host)
        {
            return host
        }
        var text = Substring(host.lowercased())
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        while text.hasSuffix(".") { text = text.dropLast() }
        return String(text)
    }
}
