/// Decoding of `upstreams[i].retry` and `upstreams[i].rate_limit`. Ranges and
/// relations between values are checked by validation.
extension RetryConfig {
    static let conditionMessage = "expected connect-failure, reset, timeout or an HTTP status from 400 to 599"

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: [
            "attempts", "backoff", "on", "budget", "buffer_limit", "per_try_timeout", "deadline", "retry_non_idempotent",
        ])
        if let value = map["attempts"] { attempts = try value.int() }
        if let value = map["backoff"] {
            let backoff = try value.mapping(keys: ["base", "max"])
            if let base = backoff["base"] { backoffBase = try base.duration() }
            if let max = backoff["max"] { backoffMax = try max.duration() }
        }
        if let value = map["on"] {
            on = []
            for element in try value.sequence(of: "retry conditions") {
                let text = try element.string().trimmingCharacters(in: .whitespaces)
                guard let condition = RetryCondition(text.lowercased()) else {
                    throw element.error("\(RetryConfig.conditionMessage), got '\(text)'")
                }
                on.insert(condition)
            }
        }
        if let value = map["budget"] {
            let budget = try value.mapping(keys: ["percent", "min_per_second"])
            if let percent = budget["percent"] { budgetPercent = try percent.number() }
            if let minimum = budget["min_per_second"] { budgetMinPerSecond = try minimum.number() }
        }
        if let value = map["buffer_limit"] { bufferLimit = try value.size() }
        if let value = map["per_try_timeout"] { perTryTimeout = try value.duration() }
        if let value = map["deadline"] { deadline = try value.duration() }
        if let value = map["retry_non_idempotent"] { retryNonIdempotent = try value.bool() }
    }
}

extension RateLimitConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: [
            "requests_per_second", "burst", "max_queue", "max_wait", "honor_upstream", "per_endpoint",
        ])
        let rate = try map["requests_per_second"].map { node throws(ConfigError) in try node.number() }
        var burst: Int?
        if let value = map["burst"] {
            guard rate != nil else {
                throw value.error("burst has no effect without requests_per_second")
            }
            burst = try value.int()
        }
        self.init(requestsPerSecond: rate, burst: burst)
        if let value = map["max_queue"] { maxQueue = try value.int() }
        if let value = map["max_wait"] { maxWait = try value.duration() }
        if let value = map["honor_upstream"] { honorUpstream = try value.bool() }
        if let value = map["per_endpoint"] { perEndpoint = try value.bool() }
    }
}
