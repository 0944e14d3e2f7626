public import GatewayConfig
import Foundation

/// Whether one mock rule matches a request, and the template's parameters
/// then: `{id}` of the endpoint template. Pure: the `nth` count is the plan's.
public struct MockMatcher: Sendable {
    public let rule: MockRule

    public init(rule: MockRule) {
        self.rule = rule
    }

    /// Whether the rule looks at the body (so the exchange's body must be in first).
    public var needsBody: Bool {
        if !rule.bodyContains.isEmpty { return true }
        guard rule.response.template, case .inline(let text) = rule.response.body else { return rule.response.template }
        return text.contains("{{body.")
    }

    /// The method and path match: the rule is a candidate before its body is read.
    public func matchesHead(method: String, path: Substring) -> Bool {
        rule.endpoint.matches(method: method, path: path)
    }

    /// Every condition of the rule but `nth` holds.
    public func matches(_ request: MockRequestView) -> Bool {
        guard matchesHead(method: request.method, path: request.path) else { return false }
        for pair in rule.query {
            guard let value = request.queryValue(pair.name), pair.value == "*" || value == pair.value else { return false }
        }
        for pair in rule.headers {
            guard let value = request.headers.first(name: pair.name),
                pair.value == "*" || value.range(of: pair.value, options: .caseInsensitive) != nil
            else { return false }
        }
        if !rule.bodyContains.isEmpty {
            guard let body = request.body else { return false }
            for text in rule.bodyContains where !body.contains(text) { return false }
        }
        return true
    }

    /// The endpoint template's parameters in `path`: `/orders/{id}` on `/orders/42` is `["id": "42"]`.
    public func parameters(of path: Substring) -> [String: String] {
        var values: [String: String] = [:]
        let components = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        for (segment, component) in zip(rule.endpoint.segments, components) {
            if case .parameter(let name) = segment {
                values[name] = String(component).removingPercentEncoding ?? String(component)
            }
        }
        return values
    }
}
