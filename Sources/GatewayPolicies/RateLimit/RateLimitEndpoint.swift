public import GatewayConfig

/// The endpoint a request counts against for `rate_limit.per_endpoint`: the
/// first matching configured template (`GET /users/{id}`), else the method and
/// the path with identifier-like segments collapsed (`GET /users/{id}`), so the
/// number of buckets stays bounded by the API's shape, not by its ids.
public enum EndpointKey {
    public static func key(method: String, path: Substring, templates: [EndpointTemplate]) -> String {
        var path = path
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        if let template = templates.first(where: { $0.matches(method: method, path: path) }) {
            return template.method == nil ? "\(method) \(template.path)" : template.description
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> Substring in
            isIdentifier(segment) ? "{id}" : segment
        }
        return "\(method) \(segments.joined(separator: "/"))"
    }

    /// Digits only, a UUID, or 16+ hex digits.
    static func isIdentifier(_ segment: Substring) -> Bool {
        guard !segment.isEmpty else { return false }
        if segment.allSatisfy({ $0 >= "0" && $0 <= "9" }) { return true }
        let hex = segment.filter { $0 != "-" }
        guard hex.allSatisfy(\.isHexDigit) else { return false }
        let isUUID = segment.count == 36 && segment.filter({ $0 == "-" }).count == 4 && hex.count == 32
        return isUUID || (segment.count >= 16 && !segment.contains("-"))
    }
}
