/// Host patterns (``HostPattern``), each tagged with a slot (the position of
/// the upstream or rule it came from), indexed so that the first pattern
/// matching a host, the smallest slot among the matches, costs a few hash
/// lookups however many patterns there are: exact names in a hash map, `*.suffix`
/// wildcards in a hash map probed once per dot of the host (every suffix that
/// starts at a dot is a wildcard that could match), `*` kept aside, and IP
/// addresses and ranges in an ``IPNetworkTable``. Built once per config load
/// (the routing index, the access rules).
///
/// Its answer is always a scan's, the smallest slot among the patterns that
/// ``HostPattern/matches(_:)`` (or ``HostPattern/matchesAsDenyRule(_:)``) the
/// host: the maps are exact for an ASCII host, where every kind of pattern
/// compares ASCII lower case (an upper-case host is lowercased once); a host
/// with a byte outside ASCII is scanned, as are the patterns with one (a
/// config file's patterns never have one: they are host names or addresses).
public struct HostPatternIndex: Sendable {
    /// Exact names (lower case) → smallest slot.
    private var exact: [String: Int] = [:]
    /// Wildcard suffixes (`.example.com` of `*.example.com`) → smallest slot.
    private var suffixes: [Substring: Int] = [:]
    /// The shortest and longest suffix in `suffixes`, in bytes: only a host's
    /// suffixes of a length in between are looked up.
    private var suffixLengths = (shortest: Int.max, longest: 0)
    /// The smallest slot of a `*`.
    private var wildcard: Int?
    private var networks = IPNetworkTable()
    /// Name patterns with a byte outside ASCII, tried one by one on every host.
    private var unindexed: [(pattern: HostPattern, slot: Int)] = []
    /// Every pattern, as given: scanned for a host with a byte outside ASCII.
    private var entries: [(pattern: HostPattern, slot: Int)] = []

    /// `entries`, in any order; a slot may be given to several patterns (an
    /// upstream's hosts).
    public init(_ entries: [(pattern: HostPattern, slot: Int)]) {
        self.entries = entries
        for (pattern, slot) in entries {
            if pattern.isWildcard {
                wildcard = wildcard.smallerSlot(slot)
            } else if let network = pattern.network {
                networks.insert(network, slot: slot)
            } else if let name = pattern.exactName, Self.isASCII(name) {
                exact[name] = exact[name].smallerSlot(slot)
            } else if let suffix = pattern.wildcardSuffix, Self.isASCII(suffix) {
                suffixes[Substring(suffix)] = suffixes[Substring(suffix)].smallerSlot(slot)
                let length = suffix.utf8.count
                suffixLengths = (shortest: min(suffixLengths.shortest, length), longest: max(suffixLengths.longest, length))
            } else {
                unindexed.append((pattern: pattern, slot: slot))
            }
        }
    }

    /// `patterns`, each with its position as its slot (a list of `allow` or `deny` rules).
    public init(patterns: [HostPattern]) {
        self.init(patterns.enumerated().map { (pattern: $0.element, slot: $0.offset) })
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The smallest slot whose pattern ``HostPattern/matches(_:)`` `host`; nil if none does.
    public func firstSlot(matching host: String) -> Int? {
        firstSlot(host, asDenyRule: false)
    }

    /// The smallest slot whose pattern ``HostPattern/matchesAsDenyRule(_:)`` `host`
    /// (an IPv6 host carrying an IPv4 address counts in IPv4 ranges).
    public func firstSlot(matchingAsDenyRule host: String) -> Int? {
        firstSlot(host, asDenyRule: true)
    }

    /// The smallest slot whose pattern ``HostPattern/matchesAsDenyRule(address:)``
    /// `address` (an address connected to): ranges and addresses only.
    public func firstSlot(denyingAddress address: IPAddress) -> Int? {
        networks.firstSlot(asDenyRuleContaining: address)
    }

    /// The ASCII check and the lower case, once: a host with a byte outside
    /// ASCII is scanned, an upper-case one lowercased (rare: the listener and
    /// `AccessConfig.normalize` lowercase hosts).
    private func firstSlot(_ host: String, asDenyRule: Bool) -> Int? {
        guard !entries.isEmpty else { return nil }
        var hasUpperCase = false
        for byte in host.utf8 {
            if byte >= 0x80 { return scan(host, asDenyRule: asDenyRule) }
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUpperCase = true }
        }
        return lookUp(hasUpperCase ? host.lowercased() : host, given: host, asDenyRule: asDenyRule)
    }

    /// `lower`: `host` (ASCII) in lower case.
    private func lookUp(_ lower: String, given host: String, asDenyRule: Bool) -> Int? {
        var first = wildcard
        if !exact.isEmpty, let slot = exact[lower] { first = first.smallerSlot(slot) }
        if !suffixes.isEmpty { first = first.smallerSlot(firstSuffixSlot(lower)) }
        if !networks.isEmpty { first = first.smallerSlot(firstNetworkSlot(lower, asDenyRule: asDenyRule)) }
        for (pattern, slot) in unindexed where pattern.matches(host) {
            first = first.smallerSlot(slot)
        }
        return first
    }

    /// `*.example.com` matches a host that ends with `.example.com` and is
    /// longer: every such suffix starts at a dot after the host's first byte.
    private func firstSuffixSlot(_ lower: String) -> Int? {
        let utf8 = lower.utf8
        var remaining = utf8.count
        var first: Int?
        var index = utf8.startIndex
        while index != utf8.endIndex, remaining >= suffixLengths.shortest {
            if remaining <= suffixLengths.longest, remaining < utf8.count, utf8[index] == UInt8(ascii: "."),
                let slot = suffixes[lower[index...]]
            {
                first = first.smallerSlot(slot)
            }
            utf8.formIndex(after: &index)
            remaining -= 1
        }
        return first
    }

    /// A dotted quad, or an IPv6 literal (it has a colon): no other host is an address.
    private func firstNetworkSlot(_ lower: String, asDenyRule: Bool) -> Int? {
        if let value = IPAddress.canonicalIPv4(Substring(lower).utf8) {
            return networks.firstSlot(containingIPv4: value)
        }
        guard lower.utf8.contains(UInt8(ascii: ":")), let address = IPAddress(lower) else { return nil }
        return asDenyRule ? networks.firstSlot(asDenyRuleContaining: address) : networks.firstSlot(containing: address)
    }

    /// Every pattern tried, as before the index: for a host with a byte outside ASCII.
    private func scan(_ host: String, asDenyRule: Bool) -> Int? {
        var first: Int?
        for (pattern, slot) in entries where asDenyRule ? pattern.matchesAsDenyRule(host) : pattern.matches(host) {
            first = first.smallerSlot(slot)
        }
        return first
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }
}
