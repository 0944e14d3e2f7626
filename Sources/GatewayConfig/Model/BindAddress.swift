/// A `host:port` to listen on: `127.0.0.1:8080`, `localhost:8080`,
/// `0.0.0.0:8080`, `[::1]:8080`. Port 0 asks the OS for a free port.
public struct BindAddress: Sendable, Equatable, CustomStringConvertible {
    /// A hostname or an IP address; IPv6 without brackets (`::1`).
    public var host: String
    /// 0...65535; 0 lets the OS pick.
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` or `[ipv6]:port`; nil if malformed or the port is out of 0...65535.
    public init?(_ text: String) {
        guard case .success(let address) = BindAddress.parse(text) else { return nil }
        self = address
    }

    /// `host:port`, with brackets around an IPv6 host.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// True for `localhost`, 127.0.0.0/8, `::1` and `::ffff:127.x.x.x`:
    /// addresses no other machine can reach.
    public var isLoopback: Bool {
        let lower = host.lowercased()
        if lower == "localhost" || lower.hasSuffix(".localhost") { return true }
        if let v4 = IPAddressText.ipv4Bytes(lower) { return v4[0] == 127 }
        if let v6 = IPAddressText.ipv6Bytes(lower) {
            if v6 == [UInt8](repeating: 0, count: 15) + [1] { return true }
            let mappedPrefix = [UInt8](repeating: 0, count: 10) + [0xff, 0xff]
            return Array(v6[0..<12]) == mappedPrefix && v6[12] == 127
        }
        return false
    }

    /// Every address of the machine (`0.0.0.0` or `::`).
    public var isWildcard: Bool {
        if let v4 = IPAddressText.ipv4Bytes(host) { return v4 == [0, 0, 0, 0] }
        if let v6 = IPAddressText.ipv6Bytes(host) { return v6 == [UInt8](repeating: 0, count: 16) }
        return false
    }

    /// Whether binding both hosts on one port would clash: the same host, `::`
    /// (dual-stack, every address), or `0.0.0.0` beside an IPv4 address or a name.
    /// `0.0.0.0` and an IPv6 address can share a port.
    func overlaps(_ other: BindAddress) -> Bool {
        if host.lowercased() == other.host.lowercased() { return true }
        func isAnyV6(_ a: BindAddress) -> Bool { a.isWildcard && IPAddressText.ipv6Bytes(a.host) != nil }
        func isAnyV4(_ a: BindAddress) -> Bool { a.isWildcard && IPAddressText.ipv4Bytes(a.host) != nil }
        if isAnyV6(self) || isAnyV6(other) { return true }
        if isAnyV4(self) { return IPAddressText.ipv6Bytes(other.host) == nil }
        if isAnyV4(other) { return IPAddressText.ipv6Bytes(host) == nil }
        return false
    }

    /// The parse with a reason for failure, for error messages.
    static func parse(_ text: String) -> Result<BindAddress, BindAddressProblem> {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return .failure(.malformed) }
            hostPart = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return .failure(.malformed) }
            portPart = rest.dropFirst()
            guard IPAddressText.ipv6Bytes(String(hostPart)) != nil else { return .failure(.badHost) }
        } else {
            guard let colon = text.lastIndex(of: ":") else { return .failure(.malformed) }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { return .failure(.malformed) }  // bare IPv6
            guard IPAddressText.isHostname(String(hostPart)) else { return .failure(.badHost) }
        }
        guard !portPart.isEmpty, portPart.allSatisfy(\.isASCIIDigit), portPart.count <= 5,
            let port = Int(portPart), port <= 65535
        else { return .failure(.badPort) }
        return .success(BindAddress(host: String(hostPart), port: port))
    }

    enum BindAddressProblem: Error, Equatable {
        case malformed, badHost, badPort

        var message: String {
            switch self {
            case .malformed:
                "expected host:port like 127.0.0.1:8080, or [::1]:8080 (quoted) for IPv6"
            case .badHost:
                "not a valid host name or IP address"
            case .badPort:
                "port must be an integer from 0 to 65535"
            }
        }
    }
}

/// `listen`: where the proxy and the admin (metrics, health) endpoints listen.
public struct ListenConfig: Sendable, Equatable {
    public var proxy: BindAddress
    public var admin: BindAddress
    /// `admin_hosts`: further `Host` names (or addresses) the admin listener
    /// answers, besides its own address, `localhost`, `127.0.0.1` and `[::1]`;
    /// any other `Host` gets 421 (a DNS-rebinding page cannot read it).
    public var adminHosts: [String]

    public static let defaultProxy = BindAddress(host: "127.0.0.1", port: 8080)
    public static let defaultAdmin = BindAddress(host: "127.0.0.1", port: 9090)

    public init(
        proxy: BindAddress = ListenConfig.defaultProxy,
        admin: BindAddress = ListenConfig.defaultAdmin,
        adminHosts: [String] = []
    ) {
        self.proxy = proxy
        self.admin = admin
        self.adminHosts = adminHosts
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
