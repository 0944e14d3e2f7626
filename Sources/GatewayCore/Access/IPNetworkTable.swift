/// IP ranges (``IPNetwork``) grouped by prefix length, each range tagged with a
/// slot (the position of the rule or upstream it came from), so that the
/// smallest slot whose range holds an address costs one hash lookup per
/// distinct prefix length in the table (at most 33 for IPv4, 129 for IPv6),
/// not one test per range. A table of 1,000 `/24` ranges is one lookup.
///
/// Its answers are those of a scan of the ranges in slot order:
/// ``IPNetwork/contains(_:)`` for ``firstSlot(containing:)`` (an IPv4-mapped
/// address counts as its IPv4 address), and ``IPNetwork/containsIncludingEmbeddedIPv4(_:)``
/// for ``firstSlot(asDenyRuleContaining:)`` (NAT64 and IPv4-compatible
/// addresses count in IPv4 ranges too). Built once per config load; reading
/// it allocates nothing for an IPv4 address.
public struct IPNetworkTable: Sendable {
    /// The IPv4 ranges of one prefix length: network (masked) → smallest slot.
    private struct IPv4Level: Sendable {
        let mask: UInt32
        var slots: [UInt32: Int]
    }

    /// The IPv6 ranges of one prefix length: network (masked) → smallest slot.
    private struct IPv6Level: Sendable {
        let mask: IPv6Bits
        var slots: [IPv6Bits: Int]
    }

    private var ipv4: [IPv4Level] = []
    private var ipv6: [IPv6Level] = []

    /// No ranges.
    public init() {}

    /// `networks`, each with its position as its slot.
    public init(_ networks: [IPNetwork]) {
        for (slot, network) in networks.enumerated() {
            insert(network, slot: slot)
        }
    }

    public var isEmpty: Bool { ipv4.isEmpty && ipv6.isEmpty }

    /// Adds `network` with `slot`; a range added twice keeps its smallest slot.
    public mutating func insert(_ network: IPNetwork, slot: Int) {
        if network.address.isIPv4 {
            let mask = Self.ipv4Mask(prefixLength: network.prefixLength)
            let value = Self.ipv4Value(network.address.bytes)
            if let level = ipv4.firstIndex(where: { $0.mask == mask }) {
                ipv4[level].slots[value] = ipv4[level].slots[value].smallerSlot(slot)
            } else {
                ipv4.append(IPv4Level(mask: mask, slots: [value: slot]))
            }
        } else {
            let mask = IPv6Bits(maskOfPrefixLength: network.prefixLength)
            let value = IPv6Bits(network.address.bytes)
            if let level = ipv6.firstIndex(where: { $0.mask == mask }) {
                ipv6[level].slots[value] = ipv6[level].slots[value].smallerSlot(slot)
            } else {
                ipv6.append(IPv6Level(mask: mask, slots: [value: slot]))
            }
        }
    }

    /// The smallest slot whose IPv4 range holds `value` (an address as
    /// ``IPAddress/canonicalIPv4(_:)`` gives it); IPv6 ranges never do.
    public func firstSlot(containingIPv4 value: UInt32) -> Int? {
        var first: Int?
        for level in ipv4 {
            if let slot = level.slots[value & level.mask] { first = first.smallerSlot(slot) }
        }
        return first
    }

    /// The smallest slot whose range holds `address`, an IPv4-mapped address
    /// (`::ffff:10.0.0.1`) taken as its IPv4 address: ``IPNetwork/contains(_:)``.
    public func firstSlot(containing address: IPAddress) -> Int? {
        let address = address.unmapped
        if address.isIPv4 {
            return ipv4.isEmpty ? nil : firstSlot(containingIPv4: Self.ipv4Value(address.bytes))
        }
        guard !ipv6.isEmpty else { return nil }
        let value = IPv6Bits(address.bytes)
        var first: Int?
        for level in ipv6 {
            if let slot = level.slots[value.masked(by: level.mask)] { first = first.smallerSlot(slot) }
        }
        return first
    }

    /// ``firstSlot(containing:)`` as a `deny` rule matches: an IPv6 address
    /// carrying an IPv4 address (``IPAddress/embeddedIPv4``: `64:ff9b::10.0.0.1`,
    /// `::10.0.0.1`) also counts in the IPv4 ranges holding that one
    /// (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``).
    public func firstSlot(asDenyRuleContaining address: IPAddress) -> Int? {
        let direct = firstSlot(containing: address)
        guard !address.isIPv4, !ipv4.isEmpty, let embedded = address.embeddedIPv4 else { return direct }
        return direct.smallerSlot(firstSlot(containingIPv4: Self.ipv4Value(embedded.bytes)))
    }

    /// The network mask of an IPv4 prefix length (0...32).
    static func ipv4Mask(prefixLength: Int) -> UInt32 {
        prefixLength <= 0 ? 0 : ~UInt32(0) << UInt32(32 - min(prefixLength, 32))
    }

    /// Four bytes, network order, as one number.
    static func ipv4Value(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}

/// An IPv6 address (or mask) as two numbers, to hash and mask without arrays.
private struct IPv6Bits: Hashable, Sendable {
    var high: UInt64
    var low: UInt64

    /// Sixteen bytes, network order.
    init(_ bytes: [UInt8]) {
        high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// The network mask of an IPv6 prefix length (0...128).
    init(maskOfPrefixLength prefixLength: Int) {
        high = Self.leadingOnes(prefixLength)
        low = Self.leadingOnes(prefixLength - 64)
    }

    func masked(by mask: IPv6Bits) -> IPv6Bits {
        var result = self
        result.high &= mask.high
        result.low &= mask.low
        return result
    }

    /// A 64-bit word whose first `count` bits (clamped to 0...64) are set.
    private static func leadingOnes(_ count: Int) -> UInt64 {
        if count <= 0 { return 0 }
        if count >= 64 { return ~UInt64(0) }
        return ~UInt64(0) << UInt64(64 - count)
    }
}
