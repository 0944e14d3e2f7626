import NIOConcurrencyHelpers

/// The IP and CIDR `deny` rules, checked against the address an upstream
/// connection actually reached (after DNS), so that a name resolving to a
/// denied address (`internal.example` → 10.0.0.5, or a rebinding attack) is
/// denied too. Shared by the pool's connector and replaced on each config
/// (re)load; read once per new upstream connection, not per request.
public final class DeniedAddresses: Sendable {
    private let networks = NIOLockedValueBox<[IPNetwork]>([])

    public init(_ networks: [IPNetwork] = []) {
        self.networks.withLockedValue { $0 = networks }
    }

    public func replace(with networks: [IPNetwork]) {
        self.networks.withLockedValue { $0 = networks }
    }

    /// True when `address` (`10.0.0.5`, `::1`) lies in a denied range, or is a
    /// NAT64 or IPv4-compatible address (`64:ff9b::10.0.0.5`, `::10.0.0.5`)
    /// carrying an IPv4 address in one (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``).
    public func denies(_ address: IPAddress) -> Bool {
        networks.withLockedValue { $0.contains { $0.containsIncludingEmbeddedIPv4(address) } }
    }
}
