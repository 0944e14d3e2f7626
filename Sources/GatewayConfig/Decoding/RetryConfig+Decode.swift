/// Decoding of `upstreams[i].retry` and `upstreams[i].rate_limit`. Ranges and
/// relations between values are checked by validation.
extension RetryConfig {
    static let conditionMessage = "expected connect-failure, reset, timeout or an HTTP status from 400 to 599"

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: [
            "attempts", "backoff", "on", "budget", "buffer_limit", "per_try_timeout", "deadline", "retry_non_idempotent",
        ])
        map.decode("attempts", into: &attempts) { try $0.int() }
        if let value = map["backoff"], let backoff = value.decoded({ try $0.mapping(keys: ["base", "max"]) }) {
            backoff.decode("base", into: &backoffBase) { try $0.duration() }
            backoff.decode("max", into: &backoffMax) { try $0.duration() }
        }
        map.decode("on", into: &on) { Set(try $0.elements(of: "retry conditions") { try RetryConfig.condition($0) }) }
        if let value = map["budget"], let budget = value.decoded({ try $0.mapping(keys: ["percent", "min_per_second"]) }) {
            budget.decode("percent", into: &budgetPercent) { try $0.number() }
            budget.decode("min_per_second", into: &budgetMinPerSecond) { try $0.number() }
        }
        map.decode("buffer_limit", into: &bufferLimit) { try $0.size() }
        map.decode("per_try_timeout", into: &perTryTimeout) { try $0.duration() }
        map.decode("deadline", into: &deadline) { try $0.duration() }
        map.decode("retry_non_idempotent", into: &retryNonIdempotent) { try $0.bool() }
    }

    /// One of `on`'s conditions; a misspelt name gets a suggestion.
    static func condition(_ element: ConfigNode) throws(ConfigError) -> RetryCondition {
        let text = try element.string().trimmingCharacters(in: .whitespaces)
        guard let condition = RetryCondition(text.lowercased()) else {
            let names = ["connect-failure", "reset", "timeout"]
            let suggestion = text.allSatisfy(\.isASCIIDigit) ? "" : ConfigNode.suggestion(for: text, among: names)
            throw element.error("\(RetryConfig.conditionMessage), got '\(text)'" + suggestion)
        }
        return condition
    }
}

extension RateLimitConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: [
            "requests_per_second", "burst", "max_queue", "max_wait", "honor_upstream", "per_endpoint",
        ])
        let rate = map.decode("requests_per_second") { try $0.number() }
        var burst: Int?
        if let value = map["burst"] {
            if map["requests_per_second"] == nil {
                node.context.issues.reject(value.error("burst has no effect without requests_per_second"))
            } else {
                burst = value.decoded { try $0.int() }
            }
        }
        self.init(requestsPerSecond: rate, burst: burst)
        map.decode("max_queue", into: &maxQueue) { try $0.int() }
        map.decode("max_wait", into: &maxWait) { try $0.duration() }
        map.decode("honor_upstream", into: &honorUpstream) { try $0.bool() }
        map.decode("per_endpoint", into: &perEndpoint) { try $0.bool() }
    }
}
