/// A host pattern from config: `api.example.com` (exact), `*.example.com`
/// (any subdomain, not the apex), `*` (any host), or an IP address or CIDR
/// range (`127.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`). Names are
/// case-insensitive; addresses are compared as addresses, whatever the
/// spelling (`0::1` is `::1`, `::ffff:127.0.0.2` is `127.0.0.2`). As a `deny`
/// rule (``matchesAsDenyRule(_:)``), an IPv4 address or range also matches the
/// NAT64 and IPv4-compatible addresses carrying it (`64:ff9b::127.0.0.2`, `::127.0.0.2`).
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case any
        case exact(String)
        case suffix(String)  // ".example.com"
        case network(IPNetwork)
    }

    private let kind: Kind
    public let description: String

    /// Returns nil when the pattern is malformed (empty, a `*` not at the start, spaces).
    public init?(_ text: String) {
        let lower = text.lowercased()
        guard !lower.isEmpty, !lower.contains(" ") else { return nil }
        description = lower
        if let network = IPNetwork(lower) {
            kind = .network(network)
            return
        }
        guard !lower.contains("/") else { return nil }
        if lower == "*" {
            kind = .any
        } else if lower.hasPrefix("*.") {
            let rest = lower.dropFirst(1)
            guard rest.count > 1, !rest.dropFirst().contains("*") else { return nil }
            kind = .suffix(String(rest))
        } else {
            guard !lower.contains("*") else { return nil }
            kind = .exact(lower)
        }
    }

    /// True for an IP address or range pattern.
    public var isAddressPattern: Bool {
        if case .network = kind { return true }
        return false
    }

    /// True for a CIDR range wider than one address (`10.0.0.0/8`).
    public var isRange: Bool {
        if case .network(let network) = kind { return network.prefixLength < network.address.bytes.count * 8 }
        return false
    }

    /// The IP range of an address or CIDR pattern (nil for names).
    public var network: IPNetwork? {
        if case .network(let network) = kind { return network }
        return nil
    }

    /// `*`: every host.
    public var isWildcard: Bool {
        if case .any = kind { return true }
        return false
    }

    /// The lower-case name of an exact pattern (`api.example.com`); nil for the
    /// other kinds. ``HostPatternIndex`` keys its hash map by it.
    var exactName: String? {
        if case .exact(let name) = kind { return name }
        return nil
    }

    /// `.example.com` of a `*.example.com` pattern (lower case, with its
    /// leading dot); nil for the other kinds. ``HostPatternIndex`` keys its
    /// hash map of wildcards by it.
    var wildcardSuffix: String? {
        if case .suffix(let suffix) = kind { return suffix }
        return nil
    }

    public func matches(_ host: String) -> Bool {
        switch kind {
        case .any:
            return true
        case .exact(let exact):
            // `exact` is lower case: an ASCII host is compared byte by byte, with no lowercased copy.
            guard host.utf8.count == exact.utf8.count else { return false }
            if host == exact { return true }
            return host.utf8.allSatisfy({ $0 < 0x80 }) ? HopByHopHeaders.equalsIgnoringCase(host, exact) : host.lowercased() == exact
        case .suffix(let suffix):
            let lower = host.lowercasedHost
            return lower.utf8.count > suffix.utf8.count && lower.hasSuffix(suffix)
        case .network(let network):
            // A dotted quad (the common case) is matched without allocating.
            if let value = IPAddress.canonicalIPv4(Substring(host).utf8) { return network.contains(ipv4: value) }
            return IPAddress(host).map(network.contains) ?? false
        }
    }

    /// ``matches(_:)`` for a `deny` rule: an IP address or range also matches
    /// an IPv6 host carrying an IPv4 address in it (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``),
    /// so `deny: [10.0.0.0/8]` refuses `[64:ff9b::10.0.0.1]` and `[::10.0.0.1]`.
    /// Names and `*` match as in ``matches(_:)``.
    public func matchesAsDenyRule(_ host: String) -> Bool {
        // Only an IPv6 host (it has a colon) can carry an embedded IPv4 address.
        guard case .network(let network) = kind, host.utf8.contains(UInt8(ascii: ":")) else { return matches(host) }
        return IPAddress(host).map(network.containsIncludingEmbeddedIPv4) ?? false
    }

    /// Whether `address` (an address connected to) lies in this pattern's
    /// range, as a `deny` rule: a NAT64 or IPv4-compatible address carrying an
    /// address in an IPv4 range counts (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``).
    /// False for name patterns and `*`.
    public func matchesAsDenyRule(address: IPAddress) -> Bool {
        if case .network(let network) = kind { return network.containsIncludingEmbeddedIPv4(address) }
        return false
    }
}
