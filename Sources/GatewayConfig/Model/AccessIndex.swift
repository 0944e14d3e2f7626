import GatewayCore

/// The `access` rules indexed (``HostPatternIndex``): a host is checked
/// against 2,000 `deny` names and ranges in a few hash lookups, not 2,000
/// matches. Built once per config load and reload (the `access` admission
/// step, the listener's `ActiveConfig`); read on every request and every
/// `CONNECT`.
///
/// Its answers are those of ``AccessConfig/isAllowed(host:)`` and
/// ``AccessConfig/isAllowed(address:)``, the scans of the rules: a deny match
/// wins, an IPv4 `deny` range also refuses the NAT64 and IPv4-compatible
/// addresses carrying its addresses, and a host written as a non-canonical
/// IPv4 address is never allowed.
public struct AccessIndex: Sendable {
    private let allow: HostPatternIndex
    private let deny: HostPatternIndex
    /// `allow` has `*` (the default).
    private let allowsEveryHost: Bool

    public init(_ access: AccessConfig) {
        allow = HostPatternIndex(patterns: access.allow)
        deny = HostPatternIndex(patterns: access.deny)
        allowsEveryHost = access.allow.contains(where: \.isWildcard)
    }

    /// ``AccessConfig/isAllowed(host:)``: `host` matches an `allow` rule and no `deny` rule.
    public func isAllowed(host: String) -> Bool {
        guard !IPAddress.isNonCanonicalIPv4(host) else { return false }
        let normalized = AccessConfig.normalize(host)
        guard !normalized.isEmpty else { return false }
        if deny.firstSlot(matchingAsDenyRule: normalized) != nil { return false }
        return allowsEveryHost || allow.firstSlot(matching: normalized) != nil
    }

    /// ``AccessConfig/isAllowed(address:)``: the address connected to lies in
    /// no `deny` address or range (false when it is not an IP address).
    public func isAllowed(address: String) -> Bool {
        guard let ip = IPAddress(address) else { return false }
        return deny.firstSlot(denyingAddress: ip) == nil
    }
}
