import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The access index answers what the scans of the rules answer
/// (``AccessConfig/isAllowed(host:)``, ``AccessConfig/isAllowed(address:)``):
/// deny winning, names and wildcards, addresses and ranges in any spelling,
/// the embedded-IPv4 deny matching, on random rules and hosts and on the
/// bench's 2,000 deny rules.
@Suite struct AccessIndexTests {
    @Test func agreesWithTheScanOnRandomRulesAndHosts() {
        var samples = HostSamples(seed: 0x40AC)
        var cases = 0
        for round in 0..<300 {
            var allow = samples.patterns(count: 1 + round % 12)
            // Now and then the default `*` among the allow rules, so that deny alone decides.
            if round % 4 == 0 { allow.insert(HostPattern("*")!, at: allow.count / 2) }
            let deny = round % 5 == 0 ? [] : samples.patterns(count: round % 40)
            let access = AccessConfig(allow: allow, deny: deny)
            let index = AccessIndex(access)
            for _ in 0..<20 {
                let host = samples.host(near: round % 2 == 0 ? deny + allow : allow + deny)
                #expect(index.isAllowed(host: host) == access.isAllowed(host: host), "\(host); allow \(allow), deny \(deny)")
                #expect(index.isAllowed(address: host) == access.isAllowed(address: host), "address \(host); deny \(deny)")
                cases += 1
            }
        }
        #expect(cases == 6_000)
    }

    /// Deny wins; a denied IPv4 range refuses the NAT64 and IPv4-compatible
    /// spellings of its addresses, which an allowed range does not admit.
    @Test(arguments: [
        ("api.example.com", true), ("API.example.com.", true), ("blocked.example.com", false), ("x.tracker.net", false),
        ("tracker.net", false), ("10.1.2.3", true), ("10.9.1.1", false), ("[::ffff:10.9.1.1]", false), ("64:ff9b::10.9.1.1", false),
        ("::10.9.1.1", false), ("64:ff9b::10.1.2.3", false), ("::1", true), ("0::1", true), ("127.0.0.1", false), ("2130706433", false),
        ("", false), ("other.test", false),
    ] as [(String, Bool)])
    func denyWinsInEveryForm(_ host: String, _ expected: Bool) {
        let allow = ["*.example.com", "api.example.com", "10.0.0.0/8", "::1", "*.tracker.net"].map { HostPattern($0)! }
        let deny = ["blocked.example.com", "*.tracker.net", "tracker.net", "10.9.0.0/16"].map { HostPattern($0)! }
        let access = AccessConfig(allow: allow, deny: deny)
        #expect(AccessIndex(access).isAllowed(host: host) == expected)
        #expect(access.isAllowed(host: host) == expected)
    }

    @Test func theAddressConnectedToIsCheckedAgainstDenyRangesOnly() {
        let access = AccessConfig(deny: ["127.0.0.0/8", "::1", "internal.example.com", "10.0.0.0/8"].map { HostPattern($0)! })
        let index = AccessIndex(access)
        for address in ["127.0.0.2", "::ffff:127.0.0.5", "0::1", "64:ff9b::10.0.0.1", "::10.0.0.1", "93.184.216.34", "2001:db8::1", "not-an-address", "internal.example.com"] {
            #expect(index.isAllowed(address: address) == access.isAllowed(address: address), "\(address)")
        }
        #expect(!index.isAllowed(address: "127.0.0.2"))
        #expect(!index.isAllowed(address: "64:ff9b::10.0.0.1"))
        #expect(index.isAllowed(address: "93.184.216.34"))
        #expect(!index.isAllowed(address: "not-an-address"))
    }

    /// The bench's config: one upstream and 2,000 deny rules (1,000 names, 1,000 CIDR ranges).
    @Test func twoThousandDenyRules() {
        var deny: [HostPattern] = []
        for number in 0..<500 {
            deny.append(HostPattern("d\(1000 + number).deny.test")!)
            deny.append(HostPattern("*.w\(1000 + number).deny.test")!)
        }
        for number in 0..<1_000 {
            deny.append(HostPattern(number % 5 == 4 ? "fd00:\(number)::/48" : "10.\(number / 250).\(number % 250).0/24")!)
        }
        let access = AccessConfig(deny: deny)
        let index = AccessIndex(access)
        let hosts = ["u1499.bench.test", "d1499.deny.test", "x.w1499.deny.test", "w1499.deny.test", "10.3.248.7", "10.4.0.1", "fd00:999::1", "fd00:998::1", "[::10.0.0.9]"]
        for host in hosts {
            #expect(index.isAllowed(host: host) == access.isAllowed(host: host), "\(host)")
            #expect(index.isAllowed(address: host) == access.isAllowed(address: host), "address \(host)")
        }
        #expect(index.isAllowed(host: "u1499.bench.test"))
        #expect(!index.isAllowed(host: "x.w1499.deny.test"))
        #expect(!index.isAllowed(host: "10.3.248.7"))
    }
}
