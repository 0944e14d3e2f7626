package import GatewayCore

/// Where a client asked the proxy to send a request, parsed from the request target.
package enum ClientTarget: Equatable, Sendable {
    /// `GET http://host:port/path?q HTTP/1.1`: forward (originating TLS for
    /// `https://`); `ws://` and `wss://` are read as `http://` and `https://`.
    case absolute(scheme: UpstreamScheme, host: String, port: Int, target: String)
    /// `CONNECT host:port HTTP/1.1`: a tunnel.
    case authority(host: String, port: Int)
    /// `GET /path HTTP/1.1`: meant for an origin server, not a proxy.
    case origin(String)

    /// Parses a request target (RFC 9112 §3.2). Returns nil when it is malformed.
    /// Once per request, over the target's bytes in one pass.
    package static func parse(_ uri: String, isConnect: Bool) -> ClientTarget? {
        var bytes = uri
        return bytes.withUTF8 { parse(uri, bytes: $0, isConnect: isConnect) }
    }

    private static func parse(_ uri: String, bytes: UnsafeBufferPointer<UInt8>, isConnect: Bool) -> ClientTarget? {
        if isConnect {
            guard let (host, port) = parseAuthority(bytes, defaultPort: nil) else { return nil }
            return .authority(host: host, port: port)
        }
        // By byte: `hasPrefix("/")` compares characters, and `/` followed by a
        // combining mark is another character.
        if bytes.first == UInt8(ascii: "/") {
            return .origin(uri)
        }
        let scheme: UpstreamScheme
        let authorityStart: Int
        if let after = Self.afterScheme("http://", in: bytes) {
            (scheme, authorityStart) = (.http, after)
        } else if let after = Self.afterScheme("https://", in: bytes) {
            (scheme, authorityStart) = (.https, after)
        } else if let after = Self.afterScheme("ws://", in: bytes) {
            // A WebSocket URI as some clients (aiohttp) send it: its http(s) form (RFC 6455 §3).
            (scheme, authorityStart) = (.http, after)
        } else if let after = Self.afterScheme("wss://", in: bytes) {
            (scheme, authorityStart) = (.https, after)
        } else {
            return nil
        }
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, !isAuthorityEnd(bytes[authorityEnd]) { authorityEnd += 1 }
        guard let (host, port) = parseAuthority(slice(bytes, authorityStart, authorityEnd), defaultPort: scheme.defaultPort) else { return nil }
        var targetEnd = authorityEnd
        while targetEnd < bytes.count, bytes[targetEnd] != UInt8(ascii: "#") { targetEnd += 1 }
        // Cut at ASCII bytes of a valid string: valid UTF-8 still.
        let target = String(decoding: slice(bytes, authorityEnd, targetEnd), as: UTF8.self)
        guard authorityEnd < targetEnd, bytes[authorityEnd] == UInt8(ascii: "/") else {
            return .absolute(scheme: scheme, host: host, port: port, target: "/" + target)
        }
        return .absolute(scheme: scheme, host: host, port: port, target: target)
    }

    /// Where the authority ends: the path, the query or the fragment begins.
    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    /// The offset after a case-insensitive scheme prefix, without Foundation.
    private static func afterScheme(_ prefix: StaticString, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return nil }
        for offset in 0..<count {
            let byte = bytes[offset]
            let lowered = (byte >= 65 && byte <= 90) ? byte | 0x20 : byte
            guard lowered == prefix.utf8Start[offset] else { return nil }
        }
        return count
    }

    private static func slice(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// `host`, `host:port`, `[v6]`, `[v6]:port`. No userinfo. Host lowercased;
    /// IPv6 in its canonical form (without brackets); IPv4 only as a canonical
    /// dotted quad (any other numeric form is malformed: the client gets 400).
    static func parseAuthority(_ authority: UnsafeBufferPointer<UInt8>, defaultPort: Int?) -> (String, Int)? {
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
        let host: String
        var portStart: Int?
        if authority[0] == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            let inner = slice(authority, 1, close)
            if close + 1 < authority.count {
                guard authority[close + 1] == UInt8(ascii: ":") else { return nil }
                portStart = close + 2
            }
            guard !inner.isEmpty, inner.allSatisfy({ IPAddress.isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return nil }
            // One spelling per address: `[0::1]` is `::1`, so rules and routing see one text.
            guard let address = IPAddress(String(decoding: inner, as: UTF8.self)), !address.isIPv4 else { return nil }
            host = address.description
        } else {
            var hostEnd = authority.count
            if let colon = authority.lastIndex(of: UInt8(ascii: ":")) {
                hostEnd = colon
                portStart = colon + 1
            }
            let name = slice(authority, 0, hostEnd)
            guard !name.isEmpty, name.allSatisfy(isHostByte) else { return nil }
            // `2130706434`, `127.2`, `0x7f000002`, `0177.0.0.2`: a resolver reads
            // each as an IPv4 address, which access rules would not see.
            guard !IPAddress.isNonCanonicalIPv4(bytes: name) else { return nil }
            host = lowercasedASCII(name)
        }
        let port: Int
        if let portStart {
            guard let value = parsePort(slice(authority, portStart, authority.count)) else { return nil }
            port = value
        } else {
            guard let defaultPort else { return nil }
            port = defaultPort
        }
        return (host, port)
    }

    /// 1 to 5 decimal digits, 1–65535.
    private static func parsePort(_ text: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !text.isEmpty, text.count <= 5 else { return nil }
        var value = 0
        for byte in text {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return (1...65535).contains(value) ? value : nil
    }

    /// A host of ``isHostByte(_:)`` bytes, A–Z lowercased.
    private static func lowercasedASCII(_ name: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: name.count) { buffer in
            for (offset, byte) in name.enumerated() {
                buffer[offset] = (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
            }
            return name.count
        }
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
