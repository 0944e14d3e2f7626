/// An IP range in CIDR notation (`10.0.0.0/8`, `::1/128`), or one address.
/// IPv4-mapped IPv6 addresses are matched as the IPv4 address they map to;
/// for a `deny` rule, NAT64 and IPv4-compatible addresses as the IPv4 address
/// they carry too (``containsIncludingEmbeddedIPv4(_:)``).
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    public let address: IPAddress
    public let prefixLength: Int
    /// An IPv4 range as (network, mask), for matching without allocating.
    private let ipv4: (network: UInt32, mask: UInt32)?

    /// `10.0.0.0/8`, `fd00::/8`, `127.0.0.1` (a /32), `[::1]` (a /128).
    /// Host bits set below the prefix are refused (`10.0.0.1/8`): they hint at a typo.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard var address = IPAddress(parts[0]) else { return nil }
        let bits = address.bytes.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.count <= 3, parts[1].utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                let value = Int(parts[1]), value <= bits
            else { return nil }
            prefix = value
        }
        // An IPv4-mapped range is the IPv4 range: ::ffff:10.0.0.0/104 is 10.0.0.0/8.
        if !address.isIPv4, address.unmapped.isIPv4, prefix >= 96 {
            address = address.unmapped
            prefix -= 96
        }
        self.address = address
        self.prefixLength = prefix
        guard Self.masked(self.address.bytes, prefixLength) == self.address.bytes else { return nil }
        if address.isIPv4 {
            let value = address.bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << UInt32(32 - prefix)
            ipv4 = (value, mask)
        } else {
            ipv4 = nil
        }
    }

    /// Whether the IPv4 address `value` (as from ``IPAddress/canonicalIPv4(_:)``) lies in the range.
    public func contains(ipv4 value: UInt32) -> Bool {
        guard let ipv4 else { return false }
        return value & ipv4.mask == ipv4.network
    }

    public static func == (lhs: IPNetwork, rhs: IPNetwork) -> Bool {
        lhs.address == rhs.address && lhs.prefixLength == rhs.prefixLength
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(address)
        hasher.combine(prefixLength)
    }

    /// Whether `ip` (unmapped first) lies in the range.
    public func contains(_ ip: IPAddress) -> Bool {
        let ip = ip.unmapped
        guard ip.bytes.count == address.bytes.count else { return false }
        return Self.masked(ip.bytes, prefixLength) == address.bytes
    }

    /// Whether `ip`, or the IPv4 address it carries (``IPAddress/embeddedIPv4``:
    /// `64:ff9b::a.b.c.d`, `::a.b.c.d`, `::ffff:a.b.c.d`), lies in the range:
    /// the test of a `deny` rule, which `[64:ff9b::10.0.0.1]` must not pass when
    /// `10.0.0.0/8` is denied. Not the test of `allow` rules or upstream and
    /// credential hosts (``contains(_:)``): a connection to a NAT64 or
    /// IPv4-compatible address goes to that IPv6 address, not to the IPv4 one.
    public func containsIncludingEmbeddedIPv4(_ ip: IPAddress) -> Bool {
        if contains(ip) { return true }
        guard ipv4 != nil, !ip.isIPv4, let embedded = ip.embeddedIPv4 else { return false }
        return contains(embedded)
    }

    public var description: String {
        prefixLength == address.bytes.count * 8 ? address.description : "\(address)/\(prefixLength)"
    }

    static func masked(_ bytes: [UInt8], _ prefix: Int) -> [UInt8] {
        var out = bytes
        for index in out.indices {
            let bitsHere = max(0, min(8, prefix - index * 8))
            out[index] &= bitsHere == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
        }
        return out
    }
}
