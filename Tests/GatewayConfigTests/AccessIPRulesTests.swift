import GatewayConfig
import GatewayCore
import Testing

/// Access rules match addresses as addresses (any spelling),
/// accept CIDR ranges, and check the address actually connected to.
@Suite("access IP rules")
struct AccessIPRulesTests {
    static func access(allow: [String] = ["*"], deny: [String]) -> AccessConfig {
        AccessConfig(allow: allow.map { HostPattern($0)! }, deny: deny.map { HostPattern($0)! })
    }

    @Test(arguments: ["127.0.0.2", "::ffff:127.0.0.2", "[::ffff:127.0.0.2]", "::1", "0::1", "[0:0::1]", "0:0:0:0:0:0:0:1",
                      "2130706434", "127.2", "0x7f000002", "0177.0.0.2", "127.0.0.2."])
    func everySpellingOfADeniedAddressIsDenied(_ host: String) {
        let access = Self.access(deny: ["127.0.0.2", "::1"])
        #expect(!access.isAllowed(host: host))
    }

    @Test func otherAddressesAndNamesStayAllowed() {
        let access = Self.access(deny: ["127.0.0.2", "::1"])
        #expect(access.isAllowed(host: "127.0.0.1"))
        #expect(access.isAllowed(host: "::2"))
        #expect(access.isAllowed(host: "example.com"))
        #expect(access.isAllowed(host: "::ffff:127.0.0.1"), "an IPv4-mapped address not denied is allowed")
        #expect(access.isAllowed(host: "[::ffff:127.0.0.1]"))
        #expect(!IPAddress.isNonCanonicalIPv4("::ffff:127.0.0.1"))
    }

    @Test func cidrRangesInAllowAndDeny() {
        let access = Self.access(allow: ["10.0.0.0/8", "::1/128", "api.example.com"], deny: ["10.9.0.0/16"])
        #expect(access.isAllowed(host: "10.1.2.3"))
        #expect(access.isAllowed(host: "[::ffff:10.1.2.3]"))
        #expect(!access.isAllowed(host: "10.9.1.1"))
        #expect(!access.isAllowed(host: "11.0.0.1"))
        #expect(access.isAllowed(host: "::1"))
        #expect(!access.isAllowed(host: "::2"))
        #expect(access.isAllowed(host: "api.example.com"))
    }

    @Test func theAddressConnectedToIsCheckedAgainstDenyRanges() {
        let access = Self.access(deny: ["127.0.0.0/8", "::1", "internal.example.com"])
        #expect(!access.isAllowed(address: "127.0.0.2"))
        #expect(!access.isAllowed(address: "::ffff:127.0.0.5"))
        #expect(!access.isAllowed(address: "0::1"))
        #expect(access.isAllowed(address: "93.184.216.34"))
        #expect(access.isAllowed(address: "2001:db8::1"))
        #expect(!access.isAllowed(address: "not-an-address"))
    }

    /// NAT64 (`64:ff9b::a.b.c.d`) and IPv4-compatible (`::a.b.c.d`) addresses
    /// carrying a denied IPv4 address are denied, as a target and once connected;
    /// `::1` and `::` are IPv6 addresses, not 0.0.0.1 and 0.0.0.0.
    @Test(arguments: ["64:ff9b::127.0.0.2", "[64:ff9b::7f00:2]", "::127.0.0.2", "[::7f00:2]", "64:ff9b::10.1.2.3", "::10.1.2.3"])
    func nat64AndIPv4CompatibleFormsOfADeniedAddressAreDenied(_ host: String) {
        let access = Self.access(deny: ["127.0.0.0/8", "10.0.0.0/8", "0.0.0.0/8"])
        #expect(!access.isAllowed(host: host))
        #expect(!access.isAllowed(address: host))
    }

    @Test func nat64AndIPv4CompatibleFormsOfOtherAddressesStayAllowed() {
        let access = Self.access(deny: ["127.0.0.0/8", "10.0.0.0/8", "0.0.0.0/8"])
        #expect(access.isAllowed(host: "64:ff9b::8.8.8.8"))
        #expect(access.isAllowed(address: "64:ff9b::8.8.8.8"))
        #expect(access.isAllowed(host: "::1"))
        #expect(access.isAllowed(address: "::1"))
        #expect(access.isAllowed(address: "::"))
        // An allow range does not reach the NAT64 or IPv4-compatible address carrying its addresses.
        let allowOnly = Self.access(allow: ["10.0.0.0/8"], deny: [])
        #expect(allowOnly.isAllowed(host: "10.1.2.3"))
        #expect(!allowOnly.isAllowed(host: "64:ff9b::10.1.2.3"))
        #expect(!allowOnly.isAllowed(host: "::10.1.2.3"))
    }

    @Test func rangesAreDecodedInAccessRules() {
        let config = TestSupport.parse("access:\n  allow: [\"10.0.0.0/8\", \"fd00::/8\"]\n  deny: [\"10.1.0.0/16\", \"[::1]\"]\n")
        #expect(config?.access.allow.map(\.description) == ["10.0.0.0/8", "fd00::/8"])
        #expect(config?.access.isAllowed(host: "10.2.0.1") == true)
        #expect(config?.access.isAllowed(host: "10.1.0.1") == false)
    }

    @Test(arguments: ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "0177.0.0.1", "2130706434", "::1/129"])
    func malformedRangesAndNonCanonicalAddressesAreRefused(_ text: String) {
        TestSupport.expectError("access:\n  deny: [\"\(text)\"]\n", keyPath: "access.deny[0]", contains: "not a host pattern")
    }

    @Test func upstreamHostsTakeAddressesButNotRanges() {
        #expect(TestSupport.parse("upstreams:\n  - name: a\n    hosts: [\"::1\", 127.0.0.1]\n")?.upstreams.first?.matches(host: "0::1") == true)
        TestSupport.expectError("upstreams:\n  - name: a\n    hosts: [\"10.0.0.0/8\"]\n", keyPath: "upstreams[0].hosts[0]", contains: "not a host pattern")
    }
}
