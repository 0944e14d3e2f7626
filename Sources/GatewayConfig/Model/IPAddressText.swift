#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Text-level checks of host names and IP addresses, without any resolution.
public enum IPAddressText {
    /// The 4 or 16 bytes of an IPv4 or IPv6 address (brackets allowed), nil for a name.
    public static func bytes(_ host: String) -> [UInt8]? {
        if host.hasPrefix("["), host.hasSuffix("]") { return ipv6Bytes(String(host.dropFirst().dropLast())) }
        return ipv4Bytes(host) ?? ipv6Bytes(host)
    }

    /// The 4 bytes of a dotted-quad IPv4 address (`127.0.0.1`), nil otherwise.
    static func ipv4Bytes(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy(\.isASCIIDigit),
                let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// The 16 bytes of an IPv6 address written without brackets, nil otherwise.
    static func ipv6Bytes(_ text: String) -> [UInt8]? {
        guard text.contains(":"), !text.contains("%") else { return nil }
        var storage = in6_addr()
        let ok = text.withCString { inet_pton(AF_INET6, $0, &storage) }
        guard ok == 1 else { return nil }
        return withUnsafeBytes(of: &storage) { Array($0) }
    }

    /// A DNS name (letters, digits, '-', '.', '_'; labels of 1–63 characters)
    /// or a dotted-quad IPv4 address.
    static func isHostname(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        if ipv4Bytes(text) != nil { return true }
        // All digits and dots but not a valid IPv4 address (`999.1.1.1`, `10.1`).
        if text.allSatisfy({ $0 == "." || $0.isASCIIDigit }) { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        for (index, label) in labels.enumerated() {
            // A single trailing dot (fully qualified name) is allowed.
            if label.isEmpty && index == labels.count - 1 && index > 0 { continue }
            guard !label.isEmpty, label.count <= 63,
                label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }),
                !label.hasPrefix("-"), !label.hasSuffix("-")
            else { return false }
        }
        return true
    }

    /// A host as written inside a URL authority: a host name, IPv4, or a
    /// bracketed IPv6 address. Returns the host without brackets.
    static func urlHost(_ text: Substring) -> String? {
        if text.hasPrefix("[") && text.hasSuffix("]") {
            let inner = String(text.dropFirst().dropLast())
            return ipv6Bytes(inner) != nil ? inner : nil
        }
        return isHostname(String(text)) ? String(text) : nil
    }
}
