public import GatewayCore
import GatewayPolicies

/// Random host patterns and hosts from a seed, for the property tests that
/// compare the routing and access indexes with the scans they replace.
///
/// Patterns: names from a small vocabulary (so that exact names and `*.`
/// wildcards overlap and nest), in mixed case, `*`, IPv4 and IPv6 addresses
/// and CIDR ranges (IPv4-mapped ones too), and a few names outside ASCII.
/// Hosts: half drawn from the given patterns (the names, their subdomains,
/// apexes and parents; addresses in and just outside the ranges, spelled as
/// IPv4, IPv4-mapped, NAT64 and IPv4-compatible IPv6 or non-canonical IPv4),
/// half at random or odd (empty, dots, brackets, ports, zone ids), some in
/// upper case, with a trailing dot or in brackets. The same seed gives the
/// same samples on every run.
public struct HostSamples {
    private var random: SplitMix64

    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    static let labels = ["api", "www", "a", "b", "cdn", "example", "test", "com", "net", "internal", "x-1", "Api", "EXAMPLE", "Cdn"]
    static let ipv4Bases: [UInt32] = [0x0A00_0000, 0x0A00_0001, 0x0A01_0203, 0x7F00_0001, 0x7F00_0002, 0xC0A8_0101, 0xAC10_0005, 0x0808_0808, 0, 0x6440_0001]
    static let ipv6Bases = ["::1", "::", "fd00::1", "fd00:1::5", "2001:db8::1", "2001:db8:0:1::1", "64:ff9b::a00:1", "fe80::1", "::a00:1"]
    static let nonASCII = ["bücher.test", "*.bücher.test", "ÄPI.test", "*.straße.example", "*.Ünï.com"]
    static let odd = [
        "", ".", "..", "*", "*.example.com", "example.com.", "[::1]", "[::1].", "::", "0::1", "[::ffff:127.0.0.1]", "127.1",
        "2130706433", "0x7f000001", "0177.0.0.1", "127.0.0.1.", "fe80::1%eth0", "bücher.test", "BÜCHER.test", "a..example.com",
        ".example.com", "EXAMPLE.COM", "api.example.com:443", "[::1", "10.0.0.1/8", "ÄPI.TEST", "x.straße.example",
    ]

    /// `count` patterns (texts `HostPattern` refuses are drawn again).
    public mutating func patterns(count: Int) -> [HostPattern] {
        var patterns: [HostPattern] = []
        while patterns.count < count {
            if let pattern = HostPattern(patternText()) { patterns.append(pattern) }
        }
        return patterns
    }

    /// One pattern as a config would write it (mixed case).
    public mutating func patternText() -> String {
        let drawn = name()
        switch int(0...99) {
        case 0..<36: return mixedCase(drawn)
        case 36..<64: return "*." + mixedCase(drawn)
        case 64..<67: return "*"
        case 67..<74: return Self.ipv4Text(pick(Self.ipv4Bases))
        case 74..<79: return pick(Self.ipv6Bases)
        case 79..<89: return ipv4Range()
        case 89..<97: return ipv6Range()
        default: return pick(Self.nonASCII)
        }
    }

    /// A host to look up: near one of `patterns` about half the time.
    public mutating func host(near patterns: [HostPattern]) -> String {
        var host: String
        switch int(0...99) {
        case 0..<50 where !patterns.isEmpty:
            let pattern = pick(patterns)
            host = hostNear(pattern)
        case 0..<70: host = name()
        case 70..<88: host = address(near: nil)
        default: host = pick(Self.odd)
        }
        if chance(12) { host = mixedCase(host) }
        if chance(5) { host += "." }
        if chance(4), host.contains(":") { host = "[\(host)]" }
        return host
    }

    /// 1 to 4 labels of the vocabulary.
    public mutating func name() -> String {
        var labels: [String] = []
        for _ in 0..<int(1...4) { labels.append(pick(Self.labels)) }
        return labels.joined(separator: ".")
    }

    private mutating func hostNear(_ pattern: HostPattern) -> String {
        if let network = pattern.network { return address(near: network) }
        let text = pattern.description
        if text == "*" { return name() }
        let base = text.hasPrefix("*.") ? String(text.dropFirst(2)) : text
        switch int(0...5) {
        case 0: return base
        case 1: return pick(Self.labels) + "." + base
        case 2: return pick(Self.labels) + "." + pick(Self.labels) + "." + base
        case 3: return base.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init) ?? base
        case 4: return "x" + base
        default: return base + "." + pick(Self.labels)
        }
    }

    /// An address in (or just outside) `network`, or anywhere near the bases, in some spelling.
    private mutating func address(near network: IPNetwork?) -> String {
        let base: [UInt8]
        let prefix: Int
        if let network {
            base = network.address.bytes
            prefix = network.prefixLength
        } else if chance(65) {
            base = Self.ipv4Bytes(pick(Self.ipv4Bases))
            prefix = int(16...32)
        } else {
            base = IPAddress(pick(Self.ipv6Bases))?.bytes ?? [UInt8](repeating: 0, count: 16)
            prefix = int(96...128)
        }
        let bytes = varied(base, keeping: prefix)
        guard bytes.count == 4 else { return IPAddress(bytes: bytes)?.description ?? "::" }
        let dotted = bytes.map(String.init).joined(separator: ".")
        switch int(0...9) {
        case 0: return "::ffff:" + dotted
        case 1: return "64:ff9b::" + dotted
        case 2: return "::" + dotted
        case 3: return String(Self.ipv4Value(bytes))
        default: return dotted
        }
    }

    /// `bytes` with random bits below `prefix`; sometimes the last bit of the
    /// prefix flipped too (an address just outside the range).
    private mutating func varied(_ bytes: [UInt8], keeping prefix: Int) -> [UInt8] {
        var out = bytes
        let bits = bytes.count * 8
        for bit in min(prefix, bits)..<bits where chance(50) {
            out[bit / 8] ^= UInt8(0x80) >> UInt8(bit % 8)
        }
        if prefix > 0, prefix <= bits, chance(25) {
            out[(prefix - 1) / 8] ^= UInt8(0x80) >> UInt8((prefix - 1) % 8)
        }
        return out
    }

    private mutating func ipv4Range() -> String {
        let prefix = int(0...32)
        let mask: UInt32 = prefix == 0 ? 0 : ~UInt32(0) << UInt32(32 - prefix)
        let network = pick(Self.ipv4Bases) & mask
        if chance(15) { return "::ffff:\(Self.ipv4Text(network))/\(96 + prefix)" }
        return "\(Self.ipv4Text(network))/\(prefix)"
    }

    private mutating func ipv6Range() -> String {
        let prefix = int(0...128)
        var bytes = IPAddress(pick(Self.ipv6Bases))?.bytes ?? [UInt8](repeating: 0, count: 16)
        for index in bytes.indices {
            let bitsHere = max(0, min(8, prefix - index * 8))
            bytes[index] &= bitsHere == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - bitsHere))
        }
        return "\(IPAddress(bytes: bytes)?.description ?? "::")/\(prefix)"
    }

    private mutating func mixedCase(_ text: String) -> String {
        var out = ""
        for character in text {
            out += chance(30) ? character.uppercased() : String(character)
        }
        return out
    }

    private mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    private mutating func chance(_ percent: Int) -> Bool {
        int(0...99) < percent
    }

    private mutating func pick<Element>(_ items: [Element]) -> Element {
        items[int(0...(items.count - 1))]
    }

    static func ipv4Text(_ value: UInt32) -> String {
        ipv4Bytes(value).map(String.init).joined(separator: ".")
    }

    static func ipv4Bytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static func ipv4Value(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
