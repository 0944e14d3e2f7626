import GatewayCore

/// The routing index: which upstream serves a host, in a few hash lookups
/// however many upstreams and host patterns the config lists (exact names,
/// `*.suffix` wildcards by the suffixes of the host, `*` and IP addresses
/// aside: ``HostPatternIndex``). Built once per config load and reload (the
/// listener's `ActiveConfig`); read on every request.
///
/// Its answer is the scan's, ``GatewayConfig/upstreamIndex(forHost:)``: the
/// first upstream in file order (the smallest index) with a host pattern that
/// matches the host, normalized as ``UpstreamConfig/matches(host:)`` does
/// (lower case, no trailing dot, IPv6 without brackets).
public struct UpstreamHostIndex: Sendable {
    private let patterns: HostPatternIndex

    /// Every host pattern of `upstreams`, tagged with its upstream's index.
    public init(_ upstreams: [UpstreamConfig]) {
        var entries: [(pattern: HostPattern, slot: Int)] = []
        entries.reserveCapacity(upstreams.reduce(0) { $0 + $1.hosts.count })
        for (index, upstream) in upstreams.enumerated() {
            for pattern in upstream.hosts {
                entries.append((pattern: pattern, slot: index))
            }
        }
        patterns = HostPatternIndex(entries)
    }

    /// Where in the config's `upstreams` the one serving `host` is; nil when none names it.
    public func upstreamIndex(forHost host: String) -> Int? {
        // No upstreams (the default config): no normalizing either.
        patterns.isEmpty ? nil : patterns.firstSlot(matching: AccessConfig.normalize(host))
    }
}
