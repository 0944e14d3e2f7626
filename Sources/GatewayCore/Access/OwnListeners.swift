import NIOConcurrencyHelpers

/// The gateway's own listening sockets (the proxy and the admin), as bound:
/// never a target of the proxy, whatever `access.allow` says, so that a proxy
/// client cannot read the admin (traces, HAR, metrics) through the proxy, nor
/// make the proxy connect to itself. Checked on the address a connection
/// actually reached, which covers every spelling of a host (`localhost`,
/// `0.0.0.0`, `[::ffff:127.0.0.1]`, a name that resolves to it).
///
/// A listener bound to a specific address is reached at that address (an
/// IPv4-mapped IPv6 spelling counts as its IPv4 address); one bound to a
/// wildcard (`0.0.0.0`, `::`) at any local address: loopback, the wildcard
/// itself, and the machine's interface addresses given at ``set(_:localAddresses:)``.
public final class OwnListeners: Sendable {
    /// One bound socket: its address and port.
    public struct Endpoint: Sendable, Hashable {
        public let address: IPAddress
        public let port: Int

        public init(address: IPAddress, port: Int) {
            self.address = address.unmapped
            self.port = port
        }
    }

    private struct State {
        var endpoints: [Endpoint] = []
        var localAddresses: Set<IPAddress> = []
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    /// Records one bound listener (called once each listener is bound, its port 0 resolved).
    public func add(_ endpoint: Endpoint) {
        state.withLockedValue { $0.endpoints.append(endpoint) }
    }

    /// The machine's own interface addresses, for listeners on a wildcard address.
    public func setLocalAddresses(_ addresses: [IPAddress]) {
        state.withLockedValue { $0.localAddresses = Set(addresses.map(\.unmapped)) }
    }

    public var endpoints: [Endpoint] { state.withLockedValue { $0.endpoints } }

    /// Whether `host`:`port` names one of the gateway's own listeners before
    /// any lookup: an IP literal, or `localhost` (loopback by definition, RFC 6761).
    /// Names that resolve there are caught by ``contains(_:port:)`` once connected.
    public func named(host: String, port: Int) -> Bool {
        if let address = IPAddress(host) { return contains(address, port: port) }
        guard HopByHopHeaders.equalsIgnoringCase(host, "localhost") else { return false }
        return contains(IPAddress(bytes: [127, 0, 0, 1])!, port: port) || contains(IPAddress(bytes: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])!, port: port)
    }

    /// Whether a connection to `address`:`port` reaches one of the gateway's own listeners.
    public func contains(_ address: IPAddress, port: Int) -> Bool {
        let address = address.unmapped
        return state.withLockedValue { s in
            s.endpoints.contains { endpoint in
                guard endpoint.port == port else { return false }
                if endpoint.address.isUnspecified {
                    return address.isLoopback || address.isUnspecified || s.localAddresses.contains(address)
                }
                return endpoint.address == address || (endpoint.address.isLoopback && address.isUnspecified)
            }
        }
    }
}

extension IPAddress {
    /// `0.0.0.0` or `::`.
    public var isUnspecified: Bool { bytes.allSatisfy { $0 == 0 } }

    /// `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        if isIPv4 { return bytes[0] == 127 }
        return bytes[0..<15].allSatisfy { $0 == 0 } && bytes[15] == 1
    }
}
