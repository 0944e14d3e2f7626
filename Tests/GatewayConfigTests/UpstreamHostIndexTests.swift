import GatewayConfig
import GatewayCore
import GatewayTesting
import Testing

/// The routing index picks the upstream the scan in file order picks
/// (``GatewayConfig/upstreamIndex(forHost:)``), on random configs (exact
/// names, wildcards, `*`, addresses and ranges, overlapping, in mixed case)
/// and random hosts, and on the edges written out below.
@Suite struct UpstreamHostIndexTests {
    static func config(_ hosts: [[String]]) -> GatewayConfig {
        GatewayConfig(upstreams: hosts.enumerated().map { number, patterns in
            UpstreamConfig(name: "u\(number)", hosts: patterns.map { HostPattern($0)! })
        })
    }

    @Test func agreesWithTheScanOnRandomConfigsAndHosts() {
        var samples = HostSamples(seed: 0x4000)
        var cases = 0
        for round in 0..<300 {
            var upstreams: [UpstreamConfig] = []
            for number in 0..<(1 + round % 30) {
                upstreams.append(UpstreamConfig(name: "u\(number)", hosts: samples.patterns(count: 1 + number % 3)))
            }
            let config = GatewayConfig(upstreams: upstreams)
            let index = UpstreamHostIndex(upstreams)
            let patterns = upstreams.flatMap(\.hosts)
            for _ in 0..<20 {
                let host = samples.host(near: patterns)
                #expect(index.upstreamIndex(forHost: host) == config.upstreamIndex(forHost: host), "\(host) in \(patterns)")
                cases += 1
            }
        }
        #expect(cases == 6_000)
    }

    @Test func theFirstUpstreamInFileOrderWins() {
        let wildcardFirst = Self.config([["*.example.com"], ["api.example.com"], ["*"]])
        let exactFirst = Self.config([["api.example.com"], ["*.example.com"], ["*"]])
        for config in [wildcardFirst, exactFirst] {
            let index = UpstreamHostIndex(config.upstreams)
            for host in ["api.example.com", "x.api.example.com", "example.com", "other.test", "10.0.0.1"] {
                #expect(index.upstreamIndex(forHost: host) == config.upstreamIndex(forHost: host), "\(host)")
            }
        }
        #expect(UpstreamHostIndex(wildcardFirst.upstreams).upstreamIndex(forHost: "api.example.com") == 0)
        #expect(UpstreamHostIndex(exactFirst.upstreams).upstreamIndex(forHost: "api.example.com") == 0)
        #expect(UpstreamHostIndex(exactFirst.upstreams).upstreamIndex(forHost: "www.example.com") == 1)
        #expect(UpstreamHostIndex(exactFirst.upstreams).upstreamIndex(forHost: "example.com") == 2)
    }

    /// Hosts are normalized as the scan normalizes them: case, a trailing dot,
    /// IPv6 brackets; addresses match in any spelling.
    @Test(arguments: [
        ("API.Example.COM", 1), ("api.example.com.", 1), ("x.cdn.example.com", 2), ("cdn.example.com", nil), ("[::1]", 3), ("0::1", 3),
        ("::ffff:127.0.0.1", 4), ("127.0.0.1", 4), ("127.1", nil), ("", nil), ("other.test", nil),
    ] as [(String, Int?)])
    func normalizedHosts(_ host: String, _ expected: Int?) {
        let config = Self.config([["first.test"], ["api.example.com"], ["*.cdn.example.com"], ["::1"], ["127.0.0.1"]])
        let index = UpstreamHostIndex(config.upstreams)
        #expect(index.upstreamIndex(forHost: host) == expected)
        #expect(config.upstreamIndex(forHost: host) == expected)
    }

    /// The bench's configs (scripts/bench): 500 upstreams, the request for the last.
    @Test func fiveHundredUpstreams() {
        let exact = Self.config((0..<500).map { ["u\(1000 + $0).bench.test"] })
        let suffix = Self.config((0..<500).map { ["*.u\(1000 + $0).bench.test"] })
        #expect(UpstreamHostIndex(exact.upstreams).upstreamIndex(forHost: "u1499.bench.test") == 499)
        #expect(UpstreamHostIndex(suffix.upstreams).upstreamIndex(forHost: "www.u1499.bench.test") == 499)
        #expect(UpstreamHostIndex(suffix.upstreams).upstreamIndex(forHost: "u1499.bench.test") == nil)
        #expect(UpstreamHostIndex([]).upstreamIndex(forHost: "u1499.bench.test") == nil)
    }
}
