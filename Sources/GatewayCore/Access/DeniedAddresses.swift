import NIOConcurrencyHelpers

/// The IP and CIDR `deny` rules, checked against the address an upstream
/// connection actually reached (after DNS), so that a name resolving to a
/// denied address (`internal.example` → 10.0.0.5, or a rebinding attack) is
/// denied too. Shared by the pool's connector and replaced on each config
/// (re)load, which indexes the ranges (``IPNetworkTable``); read once per new
/// upstream connection, not per request.
public final class DeniedAddresses: Sendable {
    private let table: NIOLockedValueBox<IPNetworkTable>

    public init(_ networks: [IPNetwork] = []) {
        table = NIOLockedValueBox(IPNetworkTable(networks))
    }

    public func replace(with networks: [IPNetwork]) {
        let indexed = IPNetworkTable(networks)
        table.withLockedValue { $0 = indexed }
    }

    /// True when `address` (`10.0.0.5`, `::1`) lies in a denied range, or is a
    /// NAT64 or IPv4-compatible address (`64:ff9b::10.0.0.5`, `::10.0.0.5`)
    /// carrying an IPv4 address in one (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``).
    public func denies(_ address: IPAddress) -> Bool {
        table.withLockedValue { $0.firstSlot(asDenyRuleContaining: address) != nil }
    }
}
