public import GatewayConfig

/// The endpoint a request counts against for `rate_limit.per_endpoint`: the
/// first matching configured template (`GET /users/{id}`), else the method and
/// the automatic template the metrics use (`PathNormalizer`: `/users/42` →
/// `/users/{id}`), so a request's rate-limit bucket and its metrics series name
/// the same endpoint, and the number of buckets follows the API's shape, not its ids.
public enum RateLimitEndpoint {
    public static func key(method: String, path: Substring, templates: [EndpointTemplate]) -> String {
        var path = path
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        if let template = templates.first(where: { $0.matches(method: method, path: path) }) {
            return template.method == nil ? "\(method) \(template.path)" : template.description
        }
        return "\(method) \(PathNormalizer.normalize(path))"
    }
}
