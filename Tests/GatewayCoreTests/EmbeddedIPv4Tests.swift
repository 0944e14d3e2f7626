import GatewayCore
import Testing

/// An IPv4 `deny` rule also refuses the NAT64 (`64:ff9b::a.b.c.d`) and
/// IPv4-compatible (`::a.b.c.d`) addresses carrying its addresses, both as a
/// target host and as the address connected to; `allow` rules do not widen.
struct EmbeddedIPv4Tests {
    @Test(arguments: [
        ("127.0.0.2", "127.0.0.2"), ("::ffff:127.0.0.2", "127.0.0.2"), ("64:ff9b::127.0.0.2", "127.0.0.2"),
        ("[64:ff9b::7f00:2]", "127.0.0.2"), ("::127.0.0.2", "127.0.0.2"), ("::a00:1", "10.0.0.1"), ("::0.0.0.2", "0.0.0.2"),
    ])
    func embeddedIPv4IsTheLastFourBytes(_ text: String, _ expected: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.embeddedIPv4 == IPAddress(expected))
    }

    /// `::` and `::1` are IPv6's unspecified and loopback addresses, not 0.0.0.0 and 0.0.0.1.
    @Test(arguments: ["::", "::1", "2001:db8::127.0.0.2", "64:ff9b:1::7f00:2", "64:ff9b::1:7f00:2", "fe80::1"])
    func otherIPv6AddressesCarryNoIPv4(_ text: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.embeddedIPv4 == nil)
    }

    @Test(arguments: ["64:ff9b::127.0.0.5", "64:ff9b::7f00:5", "[64:ff9b::7f00:5]", "::127.0.0.5", "::7f00:5", "::ffff:127.0.0.5", "127.0.0.5"])
    func anIPv4DenyRangeMatchesEveryEmbedding(_ host: String) throws {
        let rule = try #require(HostPattern("127.0.0.0/8"))
        let network = try #require(IPNetwork("127.0.0.0/8"))
        let address = try #require(IPAddress(host))
        #expect(rule.matchesAsDenyRule(host))
        #expect(rule.matchesAsDenyRule(address: address))
        #expect(DeniedAddresses([network]).denies(address))
    }

    @Test func unspecifiedAndLoopbackIPv6AreNotIPv4() throws {
        let zeroRange = try #require(HostPattern("0.0.0.0/8"))
        let loopbackRule = try #require(HostPattern("::1"))
        let zeroNetwork = try #require(IPNetwork("0.0.0.0/8"))
        let denied = DeniedAddresses([zeroNetwork])
        let loopback = try #require(IPAddress("::1"))
        #expect(!zeroRange.matchesAsDenyRule("::"))
        #expect(!zeroRange.matchesAsDenyRule("::1"))
        #expect(loopbackRule.matchesAsDenyRule("::1"))
        #expect(!denied.denies(loopback))
    }

    @Test func otherAddressesAndIPv6RulesAreUnchanged() throws {
        let rule = try #require(HostPattern("10.0.0.0/8"))
        #expect(!rule.matchesAsDenyRule("64:ff9b::8.8.8.8"))
        #expect(!rule.matchesAsDenyRule("::8.8.8.8"))
        #expect(!rule.matchesAsDenyRule("2001:db8::a00:1"))
        #expect(!rule.matchesAsDenyRule("internal.example"))
        // An IPv6 rule for the NAT64 prefix matches its addresses as IPv6, not as 0.0.0.0/0.
        let nat64 = try #require(HostPattern("64:ff9b::/96"))
        #expect(nat64.matchesAsDenyRule("64:ff9b::10.0.0.1"))
        #expect(!nat64.matchesAsDenyRule("10.0.0.1"))
    }

    /// An `allow` range is not widened: a connection to `64:ff9b::10.0.0.1`
    /// goes to that IPv6 address (a NAT64 gateway's), not to 10.0.0.1.
    @Test func allowMatchingStaysExact() throws {
        let rule = try #require(HostPattern("10.0.0.0/8"))
        let network = try #require(IPNetwork("10.0.0.0/8"))
        let nat64 = try #require(IPAddress("64:ff9b::10.0.0.1"))
        #expect(rule.matches("[::ffff:10.0.0.1]"))
        #expect(!rule.matches("64:ff9b::10.0.0.1"))
        #expect(!rule.matches("::10.0.0.1"))
        #expect(!network.contains(nat64))
        #expect(network.containsIncludingEmbeddedIPv4(nat64))
    }
}
