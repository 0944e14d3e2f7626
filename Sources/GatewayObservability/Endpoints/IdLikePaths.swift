import GatewayConfig
/// Notices automatic endpoints that differ only in segments holding digits
/// that normalization keeps (`/slow/report-13`, `/slow/report-14`, ...: not
/// all digits, too short for hex or token-like), so each id became a series
/// of its own, and names the `endpoints:` template that would fold them
/// (`/slow/{id}`). Fed by ``EndpointRegistry`` only when it makes a new
/// automatic endpoint of a configured upstream, never per request; holds at
/// most one entry per such endpoint (bounded by the endpoint budget).
struct IdLikePaths {
    /// Endpoints that fold into one template before the warning.
    static let threshold = 5
    static let exampleCount = 3

    struct Warning: Sendable, Equatable {
        var upstream: String
        /// The template that folds them: `/slow/{id}`.
        var template: String
        /// The first few of them.
        var examples: [String]
        /// How many series they made so far.
        var count: Int
    }

    private struct Candidate: Hashable {
        var upstream: String
        var template: String
    }

    private var seen: [Candidate: (count: Int, examples: [String])] = [:]
    private var warned: Set<String> = []

    /// Notes a new automatic endpoint of `upstream`; the warning when its
    /// template just reached ``threshold`` endpoints (once per upstream).
    mutating func note(upstream: String, endpoint: String) -> Warning? {
        guard !warned.contains(upstream), let template = Self.template(folding: endpoint) else { return nil }
        let key = Candidate(upstream: upstream, template: template)
        var entry = seen[key] ?? (0, [])
        entry.count += 1
        if entry.examples.count < Self.exampleCount { entry.examples.append(endpoint) }
        seen[key] = entry
        guard entry.count >= Self.threshold else { return nil }
        warned.insert(upstream)
        // This upstream warns no more: its entries are not needed.
        seen = seen.filter { $0.key.upstream != upstream }
        return Warning(upstream: upstream, template: template, examples: entry.examples, count: entry.count)
    }

    /// `endpoint` with each segment that holds a digit as `{id}`, nil when no
    /// segment does (`/slow/report-13` → `/slow/{id}`; `/users/{id}` → nil).
    static func template(folding endpoint: String) -> String? {
        var folded = false
        let segments = endpoint.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map { segment -> Substring in
            let text = Substring(segment)
            guard text != PathNormalizer.placeholder[...], segment.contains(where: { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                return text
            }
            folded = true
            return PathNormalizer.placeholder[...]
        }
        return folded ? segments.joined(separator: "/") : nil
    }
}
