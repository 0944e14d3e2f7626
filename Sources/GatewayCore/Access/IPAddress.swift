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
/// IPv4 address it maps to (``unmapped``) when matched, and a NAT64 or
/// IPv4-compatible address (`64:ff9b::127.0.0.2`, `::127.0.0.2`) carries one
/// (``embeddedIPv4``) that `deny` rules match too.
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
        guard bytes.count == 16, bytes[0..<12].elementsEqual(Self.mappedPrefix) else { return self }
        return IPAddress(checked: Array(bytes[12...]))
    }

    /// The IPv4 address this address is or carries in its last four bytes:
    /// itself when IPv4; `a.b.c.d` of an IPv4-mapped (`::ffff:a.b.c.d`), a
    /// NAT64 well-known-prefix (`64:ff9b::a.b.c.d`, RFC 6052) or a deprecated
    /// IPv4-compatible (`::a.b.c.d`, RFC 4291) address; nil for any other IPv6
    /// address. `deny` rules match it (``IPNetwork/containsIncludingEmbeddedIPv4(_:)``),
    /// so that `deny: [10.0.0.0/8]` also refuses `[64:ff9b::10.0.0.1]` and `[::10.0.0.1]`.
    ///
    /// `::` and `::1` are not IPv4-compatible (nil): they are IPv6's own
    /// unspecified and loopback addresses (RFC 4291 excludes them from that
    /// form), not 0.0.0.0 and 0.0.0.1, and are matched by IPv6 rules (`::1`) only.
    public var embeddedIPv4: IPAddress? {
        if isIPv4 { return self }
        let head = bytes[0..<12]
        if head.elementsEqual(Self.mappedPrefix) || head.elementsEqual(Self.nat64Prefix) {
            return IPAddress(checked: Array(bytes[12...]))
        }
        let isCompatible = head.allSatisfy { $0 == 0 } && (bytes[12..<15].contains { $0 != 0 } || bytes[15] > 1)
        return isCompatible ? IPAddress(checked: Array(bytes[12...])) : nil
    }

    /// The first 12 bytes of an IPv4-mapped address, `::ffff:0:0/96`.
    private static let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]

    /// The first 12 bytes of the NAT64 well-known prefix, `64:ff9b::/96` (RFC 6052).
    private static let nat64Prefix: [UInt8] = [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]

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
    public static func isNonCanonicalIPv4(_ host: String) -> Bool {
        var host = host
        return host.withUTF8 { isNonCanonicalIPv4(bytes: $0) }
    }

    /// ``isNonCanonicalIPv4(_:)`` of a host's UTF-8 bytes (one pass over them,
    /// every request: not generic, so no witness call per byte).
    package static func isNonCanonicalIPv4(bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // An IPv6 literal (`::ffff:127.0.0.2`, `[::1]`) is parsed as IPv6, not by this rule.
        guard !bytes.contains(UInt8(ascii: ":")) else { return false }
        var end = bytes.count
        if end > 1, bytes[end - 1] == UInt8(ascii: ".") { end -= 1 }
        var lastStart = end
        while lastStart > 0, bytes[lastStart - 1] != UInt8(ascii: ".") { lastStart -= 1 }
        guard isNumber(UnsafeBufferPointer(rebasing: bytes[lastStart..<end])) else { return false }
        return canonicalIPv4(bytes: bytes) == nil
    }

    /// A decimal number, or `0x` followed by hex digits.
    private static func isNumber(_ label: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = label.first else { return false }
        if label.allSatisfy(isDigit) { return true }
        guard first == UInt8(ascii: "0"), label.count >= 2, label[1] | 0x20 == UInt8(ascii: "x") else { return false }
        return label.dropFirst(2).allSatisfy(isHexDigit)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// `0`–`9`, `a`–`f`, `A`–`F`.
    package static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }

    static func canonicalIPv4Bytes(_ text: Substring) -> [UInt8]? {
        guard let value = canonicalIPv4(text.utf8) else { return nil }
        return [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// `a.b.c.d` with decimal parts 0–255 without leading zeros, as a number;
    /// nil for anything else. Reads the bytes once, allocates nothing.
    public static func canonicalIPv4(_ utf8: Substring.UTF8View) -> UInt32? {
        if let value = utf8.withContiguousStorageIfAvailable({ canonicalIPv4(bytes: $0) }) { return value }
        return Array(utf8).withUnsafeBufferPointer { canonicalIPv4(bytes: $0) }
    }

    static func canonicalIPv4(bytes: UnsafeBufferPointer<UInt8>) -> UInt32? {
        var value: UInt32 = 0
        var part: UInt32 = 0
        var digits = 0
        var leadingZero = false
        var parts = 0
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard digits > 0, parts < 3 else { return nil }
                value = value << 8 | part
                parts += 1
                (part, digits, leadingZero) = (0, 0, false)
            } else if isDigit(byte) {
                guard !leadingZero, digits < 3 else { return nil }
                if digits == 0, byte == UInt8(ascii: "0") { leadingZero = true }
                part = part * 10 + UInt32(byte - UInt8(ascii: "0"))
                digits += 1
                guard part <= 255 else { return nil }
            } else {
                return nil
            }
        }
        guard digits > 0, parts == 3 else { return nil }
        return value << 8 | part
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
