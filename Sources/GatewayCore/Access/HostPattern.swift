/// A host pattern from config: `api.example.com` (exact), `*.example.com`
/// (any subdomain, not the apex), or `*` (any host). Case-insensitive.
public struct HostPattern: Sendable, Hashable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case any
        case exact(String)
        case suffix(String)  // ".example.com"
    }

    private let kind: Kind
    public let description: String

    /// Returns nil when the pattern is malformed (empty, a `*` not at the start, spaces).
    public init?(_ text: String) {
        let lower = text.lowercased()
        guard !lower.isEmpty, !lower.contains(where: { $0 == " " || $0 == "/" }) else { return nil }
        description = lower
        if lower == "*" {
            kind = .any
        } else if lower.hasPrefix("*.") {
            let rest = lower.dropFirst(1)
            guard rest.count > 1, !rest.dropFirst().contains("*") else { return nil }
            kind = .suffix(String(rest))
        } else {
            guard !lower.contains("*") else { return nil }
            kind = .exact(lower)
        }
    }

    public func matches(_ host: String) -> Bool {
        switch kind {
        case .any:
            return true
        case .exact(let exact):
            return host.count == exact.count && host.lowercased() == exact
        case .suffix(let suffix):
            let lower = host.lowercased()
            return lower.count > suffix.count && lower.hasSuffix(suffix)
        }
    }
}
