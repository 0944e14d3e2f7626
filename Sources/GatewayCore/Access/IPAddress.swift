#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An IPv4 or IPv6 address parsed from its one canonical spelling, so that
/// access rules compare addresses, not text.
///
/// IPv4 is accepted only as a dotted quad of decimal numbers without leading
/// zeros (`127.0.0.2`): resolvers also read `2130706434`, `127.2`,
/// `0x7f000002` and `0177.0.0.2` as that address, and a rule written one way
/// must not be bypassed by another (``isNonCanonicalIPv4(_:)`` finds those).
/// IPv6 is parsed by `inet_pton` (brackets allowed, zone ids refused) and
/// printed by `inet_ntop`; an IPv4-mapped address (`::ffff:127.0.0.2`) is the
/// IPv4 address it maps to (``unmapped``) when matched.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// `127.0.0.2`, `::1`, `[::1]`; nil for a name or a non-canonical IPv4 form.
    public init?(_ text: some StringProtocol) {
        var text = Substring(text)
        if text.hasPrefix("[") {
            guard text.hasSuffix("]") else { return nil }
            text = text.dropFirst().dropLast()
            guard let bytes = Self.ipv6Bytes(text) else { return nil }
            self.bytes = bytes
            return
        }
        guard let bytes = Self.canonicalIPv4Bytes(text) ?? Self.ipv6Bytes(text) else { return nil }
        self.bytes = bytes
    }

    /// The IPv4 address of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`); else itself.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return self }
        return IPAddress(checked: Array(bytes[12...]))
    }

    /// `bytes` already known to be 4 or 16 long.
    private init(checked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// `127.0.0.2`, or IPv6 as `inet_ntop` writes it (`::1`), without brackets.
    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        var storage = in6_addr()
        withUnsafeMutableBytes(of: &storage) { $0.copyBytes(from: bytes) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &storage, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True for a host that a resolver would read as an IPv4 address but that
    /// is not written as a canonical dotted quad: its last label (ignoring one
    /// trailing dot) is a number, decimal or `0x` hex (the WHATWG URL rule),
    /// and the whole is not `a.b.c.d` with decimal parts 0–255 without leading
    /// zeros. `2130706434`, `127.2`, `0x7f000002`, `0177.0.0.2`, `127.0.0.2.`.
    public static func isNonCanonicalIPv4(_ host: some StringProtocol) -> Bool {
        let host = Substring(host)
        // An IPv6 literal (`::ffff:127.0.0.2`, `[::1]`) is parsed as IPv6, not by this rule.
        guard !host.utf8.contains(UInt8(ascii: ":")) else { return false }
        var labels = host.split(separator: ".", omittingEmptySubsequences: false)
        if labels.count > 1, labels.last?.isEmpty == true { labels.removeLast() }
        guard let last = labels.last, isNumber(last) else { return false }
        return canonicalIPv4Bytes(host) == nil
    }

    private static func isNumber(_ label: Substring) -> Bool {
        guard !label.isEmpty else { return false }
        if label.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) { return true }
        let lower = label.lowercased()
        guard lower.hasPrefix("0x") else { return false }
        return lower.dropFirst(2).allSatisfy(\.isHexDigit)
    }

    static func canonicalIPv4Bytes(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(4)
        for part in parts {
            guard !part.isEmpty, part.utf8.count <= 3, part.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                part.utf8.count == 1 || part.utf8.first != UInt8(ascii: "0"),
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    static func ipv6Bytes(_ text: Substring) -> [UInt8]? {
        guard text.utf8.contains(UInt8(ascii: ":")),
            text.utf8.allSatisfy({ $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || Character(Unicode.Scalar($0)).isHexDigit })
        else { return nil }
        var storage = in6_addr()
        let ok = String(text).withCString { inet_pton(AF_INET6, $0, &storage) }
        guard ok == 1 else { return nil }
        return withUnsafeBytes(of: &storage) { Array($0) }
    }
}
