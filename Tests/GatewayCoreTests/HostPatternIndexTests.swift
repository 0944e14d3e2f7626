import GatewayCore
import GatewayTesting
import Testing

/// The index of host patterns answers what a scan of them answers: the
/// smallest slot whose pattern matches, on random patterns and hosts (the
/// hosts as given: any case, dots, brackets, bytes outside ASCII), and on
/// the edges written out below.
@Suite struct HostPatternIndexTests {
    typealias Entries = [(pattern: HostPattern, slot: Int)]

    /// The scan the index replaces.
    static func scan(_ entries: Entries, _ host: String, asDenyRule: Bool) -> Int? {
        entries.filter { asDenyRule ? $0.pattern.matchesAsDenyRule(host) : $0.pattern.matches(host) }.map(\.slot).min()
    }

    static func entries(_ patterns: [String]) -> Entries {
        patterns.enumerated().map { (pattern: HostPattern($0.element)!, slot: $0.offset) }
    }

    @Test func agreesWithTheScanOnRandomPatternsAndHosts() {
        var samples = HostSamples(seed: 40)
        var cases = 0
        for round in 0..<300 {
            let patterns = samples.patterns(count: 1 + round % 40)
            // Slots out of order and shared (an upstream's several hosts): the smallest wins, not the first.
            let entries: Entries = patterns.enumerated().map { (pattern: $0.element, slot: ($0.offset * 7) % (patterns.count / 2 + 1)) }
            let index = HostPatternIndex(entries)
            for _ in 0..<20 {
                let host = samples.host(near: patterns)
                #expect(index.firstSlot(matching: host) == Self.scan(entries, host, asDenyRule: false), "\(host) in \(patterns)")
                #expect(index.firstSlot(matchingAsDenyRule: host) == Self.scan(entries, host, asDenyRule: true), "deny \(host) in \(patterns)")
                if let address = IPAddress(host) {
                    let scanned = entries.filter { $0.pattern.matchesAsDenyRule(address: address) }.map(\.slot).min()
                    #expect(index.firstSlot(denyingAddress: address) == scanned, "address \(host) in \(patterns)")
                }
                cases += 1
            }
        }
        #expect(cases == 6_000)
    }

    @Test func theSmallestSlotWinsWhateverTheKind() {
        let index = HostPatternIndex([
            (pattern: HostPattern("*.example.com")!, slot: 3), (pattern: HostPattern("api.example.com")!, slot: 5),
            (pattern: HostPattern("*")!, slot: 7), (pattern: HostPattern("10.0.0.0/8")!, slot: 1),
            (pattern: HostPattern("*.api.example.com")!, slot: 2),
        ])
        #expect(index.firstSlot(matching: "api.example.com") == 3)
        #expect(index.firstSlot(matching: "x.api.example.com") == 2)
        #expect(index.firstSlot(matching: "example.com") == 7)
        #expect(index.firstSlot(matching: "10.1.2.3") == 1)
        #expect(index.firstSlot(matching: "11.1.2.3") == 7)
    }

    @Test func aWildcardNeedsALabelBeforeItsSuffix() {
        let index = HostPatternIndex(patterns: [HostPattern("*.example.com")!])
        #expect(index.firstSlot(matching: "a.example.com") == 0)
        #expect(index.firstSlot(matching: "a.b.example.com") == 0)
        #expect(index.firstSlot(matching: "A.Example.COM") == 0)
        #expect(index.firstSlot(matching: "example.com") == nil)
        #expect(index.firstSlot(matching: ".example.com") == nil)
        #expect(index.firstSlot(matching: "badexample.com") == nil)
        #expect(index.firstSlot(matching: "example.com.evil") == nil)
    }

    /// As a `deny` rule an IPv4 range also matches the NAT64 and
    /// IPv4-compatible addresses carrying its addresses; `::` and `::1` carry none.
    @Test(arguments: ["64:ff9b::10.0.0.1", "[::10.0.0.1]", "::ffff:10.0.0.1", "10.0.0.1", "[64:ff9b::a00:1]", "::", "::1", "64:ff9b::8.8.8.8"])
    func embeddedIPv4AddressesMatchDenyRulesOnly(_ host: String) {
        let entries = Self.entries(["10.0.0.0/8", "0.0.0.0/8", "api.test"])
        let index = HostPatternIndex(entries)
        #expect(index.firstSlot(matching: host) == Self.scan(entries, host, asDenyRule: false))
        #expect(index.firstSlot(matchingAsDenyRule: host) == Self.scan(entries, host, asDenyRule: true))
    }

    @Test func embeddedIPv4Examples() throws {
        let index = HostPatternIndex(patterns: [HostPattern("10.0.0.0/8")!])
        #expect(index.firstSlot(matchingAsDenyRule: "64:ff9b::10.0.0.1") == 0)
        #expect(index.firstSlot(matching: "64:ff9b::10.0.0.1") == nil)
        #expect(index.firstSlot(matching: "[::ffff:10.0.0.1]") == 0)
        let compatible = try #require(IPAddress("::10.0.0.1"))
        #expect(index.firstSlot(denyingAddress: compatible) == 0)
        #expect(index.firstSlot(matchingAsDenyRule: "::1") == nil)
    }

    /// Hosts and patterns outside ASCII are scanned; upper-case ASCII hosts are lowercased once.
    @Test(arguments: ["bücher.test", "BÜCHER.test", "x.straße.example", "straße.example", "API.TEST", "Api.Test.", "x.api.test"])
    func hostsOutsideASCIIAndUpperCaseAgreeWithTheScan(_ host: String) {
        let entries = Self.entries(["bücher.test", "*.straße.example", "API.test", "*.Api.Test"])
        let index = HostPatternIndex(entries)
        #expect(index.firstSlot(matching: host) == Self.scan(entries, host, asDenyRule: false))
        #expect(index.firstSlot(matchingAsDenyRule: host) == Self.scan(entries, host, asDenyRule: true))
    }

    @Test func noPatternsMatchNothing() {
        let index = HostPatternIndex(patterns: [])
        #expect(index.isEmpty)
        #expect(index.firstSlot(matching: "api.test") == nil)
        #expect(index.firstSlot(matchingAsDenyRule: "::1") == nil)
    }
}
