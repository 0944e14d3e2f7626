package import GatewayCore

/// Where a client asked the proxy to send a request, parsed from the request target.
package enum ClientTarget: Equatable, Sendable {
    /// `GET http://host:port/path?q HTTP/1.1`: forward (originating TLS for `https://`).
    case absolute(scheme: UpstreamScheme, host: String, port: Int, target: String)
    /// `CONNECT host:port HTTP/1.1`: a tunnel.
    case authority(host: String, port: Int)
    /// `GET /path HTTP/1.1`: meant for an origin server, not a proxy.
    case origin(String)

    /// Parses a request target (RFC 9112 §3.2). Returns nil when it is malformed.
    package static func parse(_ uri: String, isConnect: Bool) -> ClientTarget? {
        if isConnect {
            guard let (host, port) = parseAuthority(Substring(uri), defaultPort: nil) else { return nil }
            return .authority(host: host, port: port)
        }
        // By byte: `hasPrefix("/")` compares characters, and `/` followed by a
        // combining mark is another character.
        if uri.utf8.first == UInt8(ascii: "/") {
            return .origin(uri)
        }
        let scheme: UpstreamScheme
        let rest: Substring
        if let after = Self.dropScheme("http://", from: uri) {
            (scheme, rest) = (.http, after)
        } else if let after = Self.dropScheme("https://", from: uri) {
            (scheme, rest) = (.https, after)
        } else {
            return nil
        }
        let bytes = rest.utf8
        let authorityEnd = bytes.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? bytes.endIndex
        guard let (host, port) = parseAuthority(rest[..<authorityEnd], defaultPort: scheme.defaultPort) else { return nil }
        let pathAndQuery = bytes[authorityEnd...]
        let targetEnd = pathAndQuery.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let target = rest[authorityEnd..<targetEnd]
        guard target.utf8.first == UInt8(ascii: "/") else {
            return .absolute(scheme: scheme, host: host, port: port, target: "/" + String(target))
        }
        return .absolute(scheme: scheme, host: host, port: port, target: String(target))
    }

    /// The rest of `uri` after a case-insensitive scheme prefix, without Foundation.
    private static func dropScheme(_ prefix: StaticString, from uri: String) -> Substring? {
        let utf8 = uri.utf8
        guard utf8.count >= prefix.utf8CodeUnitCount else { return nil }
        var index = utf8.startIndex
        for expected in UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount) {
            let byte = utf8[index]
            let lowered = (byte >= 65 && byte <= 90) ? byte | 0x20 : byte
            guard lowered == expected else { return nil }
            index = utf8.index(after: index)
        }
        return uri[index...]
    }

    /// `host`, `host:port`, `[v6]`, `[v6]:port`. No userinfo. Host lowercased;
    /// IPv6 in its canonical form (without brackets); IPv4 only as a canonical
    /// dotted quad (any other numeric form is malformed: the client gets 400).
    static func parseAuthority(_ authority: Substring, defaultPort: Int?) -> (String, Int)? {
        let bytes = authority.utf8
        guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "@")) else { return nil }
        var host: Substring
        var portText: Substring.UTF8View.SubSequence?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = authority[bytes.index(after: bytes.startIndex)..<close]
            let after = bytes[bytes.index(after: close)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { return nil }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            // One spelling per address: `[0::1]` is `::1`, so rules and routing see one text.
            guard let address = IPAddress(host), !address.isIPv4 else { return nil }
            host = Substring(address.description)
        } else {
            if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
                host = authority[..<colon]
                portText = bytes[bytes.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.allSatisfy(isHostByte) else { return nil }
            // `2130706434`, `127.2`, `0x7f000002`, `0177.0.0.2`: a resolver reads
            // each as an IPv4 address, which access rules would not see.
            guard !IPAddress.isNonCanonicalIPv4(host) else { return nil }
        }
        let port: Int
        if let portText {
            guard let value = parsePort(portText) else { return nil }
            port = value
        } else {
            guard let defaultPort else { return nil }
            port = defaultPort
        }
        let hasUpper = host.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        return (hasUpper ? host.lowercased() : String(host), port)
    }

    /// 1 to 5 decimal digits, 1–65535.
    private static func parsePort(_ text: Substring.UTF8View.SubSequence) -> Int? {
        guard !text.isEmpty, text.count <= 5 else { return nil }
        var value = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return (1...65535).contains(value) ? value : nil
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
