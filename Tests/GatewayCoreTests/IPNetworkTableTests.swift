import GatewayCore
import GatewayTesting
import Testing

/// The table of IP ranges by prefix length answers what a scan of the ranges
/// answers, as `allow` matching (``IPNetwork/contains(_:)``) and as `deny`
/// matching (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``), and so does
/// ``DeniedAddresses``, which the pool's connector asks once connected.
@Suite struct IPNetworkTableTests {
    @Test func agreesWithTheScanOnRandomRangesAndAddresses() {
        var samples = HostSamples(seed: 0x40)
        var cases = 0
        for round in 0..<200 {
            let patterns = samples.patterns(count: 1 + round % 30)
            let networks = patterns.compactMap(\.network)
            let table = IPNetworkTable(networks)
            let denied = DeniedAddresses(networks)
            for _ in 0..<60 {
                guard let address = IPAddress(samples.host(near: patterns)) else { continue }
                let contained = networks.indices.first { networks[$0].contains(address) }
                let deniedBy = networks.indices.first { networks[$0].containsIncludingEmbeddedIPv4(address) }
                #expect(table.firstSlot(containing: address) == contained, "\(address) in \(networks)")
                #expect(table.firstSlot(asDenyRuleContaining: address) == deniedBy, "deny \(address) in \(networks)")
                #expect(denied.denies(address) == (deniedBy != nil), "denied \(address) in \(networks)")
                cases += 1
            }
            denied.replace(with: [])
            #expect(!denied.denies(IPAddress(bytes: [10, 0, 0, 1])!))
        }
        #expect(cases > 1_500, "about a third of the hosts drawn are addresses")
    }

    /// An IPv4-mapped range is its IPv4 range; a mapped address is its IPv4
    /// address, in no IPv6 range (not even `::/0`); a NAT64 address is in
    /// IPv4 ranges only as a `deny` rule sees it.
    @Test func mappedAndEmbeddedAddresses() throws {
        let table = IPNetworkTable([IPNetwork("::ffff:10.0.0.0/104")!, IPNetwork("::/0")!, IPNetwork("0.0.0.0/0")!])
        let mapped = try #require(IPAddress("::ffff:1.2.3.4"))
        let nat64 = try #require(IPAddress("64:ff9b::10.0.0.1"))
        let loopback = try #require(IPAddress("::1"))
        #expect(table.firstSlot(containing: IPAddress(bytes: [10, 1, 1, 1])!) == 0)
        #expect(table.firstSlot(containing: mapped) == 2)
        #expect(table.firstSlot(containing: nat64) == 1)
        #expect(table.firstSlot(asDenyRuleContaining: nat64) == 0)
        #expect(table.firstSlot(asDenyRuleContaining: loopback) == 1)
        #expect(table.firstSlot(containingIPv4: 0x0A00_0001) == 0)
    }

    @Test func aRangeGivenTwiceKeepsItsSmallestSlot() {
        var table = IPNetworkTable()
        #expect(table.isEmpty)
        table.insert(IPNetwork("10.0.0.0/8")!, slot: 5)
        table.insert(IPNetwork("10.0.0.0/8")!, slot: 2)
        table.insert(IPNetwork("10.1.0.0/16")!, slot: 9)
        table.insert(IPNetwork("fd00::/8")!, slot: 4)
        table.insert(IPNetwork("fd00::/8")!, slot: 3)
        #expect(table.firstSlot(containingIPv4: 0x0A01_0101) == 2)
        #expect(table.firstSlot(containingIPv4: 0x0B01_0101) == nil)
        #expect(table.firstSlot(containing: IPAddress("fd00::5")!) == 3)
        #expect(table.firstSlot(containing: IPAddress("fe00::5")!) == nil)
    }
}
