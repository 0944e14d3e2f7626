/// Decoding of `upstreams[i].faults`.
extension FaultsConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["enabled", "seed", "rules"])
        if let value = map["enabled"] { enabled = try value.bool() }
        if let value = map["seed"] {
            let number = try value.int()
            guard number >= 0 else { throw value.error("seed must be a whole number from 0 up; got \(number)") }
            seed = UInt64(number)
        }
        if let value = map["rules"] {
            for element in try value.sequence(of: "fault rules") { rules.append(try FaultRule(decoding: element)) }
        }
    }
}

extension FaultRule {
    static let actionKeys = ["error", "latency", "reset", "slow_body"]

    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["endpoint", "rate", "every", "toward"] + FaultRule.actionKeys)
        let actions = FaultRule.actionKeys.filter { map[$0] != nil }
        guard actions.count == 1 else {
            throw node.error(actions.isEmpty
                ? "a fault needs one of: error, latency, reset, slow_body"
                : "a fault does one thing; got \(actions.joined(separator: " and "))")
        }
        let action: FaultAction
        if let value = map["error"] {
            action = .error(try FaultResponse(decoding: value))
        } else if let value = map["latency"] {
            let (low, high) = try value.durationRange()
            action = .latency(min: low, max: high)
        } else if let value = map["slow_body"] {
            let rate = try value.mapping(keys: ["bytes_per_second"])
            guard let bytes = rate["bytes_per_second"] else { throw value.error("missing required key 'bytes_per_second'") }
            let perSecond = try bytes.size()
            guard perSecond >= 1 else { throw bytes.error("bytes_per_second must be 1 or more; got \(perSecond)") }
            action = .slowBody(bytesPerSecond: perSecond)
        } else {
            action = try Self.reset(decoding: map["reset"]!)
        }
        self.init(action: action)
        if let value = map["endpoint"] { endpoint = try value.endpointTemplate() }
        if let value = map["rate"] {
            rate = try value.number()
            guard (0...1).contains(rate) else { throw value.error("rate must be from 0 to 1 (0.25: one request in four); got \(rate)") }
        }
        if let value = map["every"] {
            guard map["rate"] == nil else { throw value.error("every and rate exclude each other: every n-th call, or a chance per call") }
            let n = try value.int()
            guard n >= 1 else { throw value.error("every must be 1 or more (3: every third matching call); got \(n)") }
            every = n
        }
        if let value = map["toward"] {
            let text = try value.string()
            guard let target = FaultTarget(rawValue: text.lowercased()) else {
                throw value.error("expected one of: app, policies; got '\(text)'")
            }
            guard target == .app || stage != .responseBody else {
                throw value.error("a slow body or a reset in the middle of the body acts toward the app only (the response has started: no policy of the gateway sees it)")
            }
            toward = target
        }
    }

    /// `reset: true` (before the response) or `reset: {after: 4KiB}` (in the middle of the body).
    static func reset(decoding value: ConfigNode) throws(ConfigError) -> FaultAction {
        if case .scalar = value.node {
            guard try value.bool() else { throw value.error("reset: true is the only setting (remove the rule to turn it off)") }
            return .reset
        }
        let map = try value.mapping(keys: ["after"])
        guard let after = map["after"] else { throw value.error("missing required key 'after' (reset: true resets before the response)") }
        let bytes = try after.size()
        guard bytes >= 1 else { throw after.error("after must be 1 byte or more (reset: true resets before the response)") }
        return .resetMidBody(afterBytes: bytes)
    }
}

extension FaultResponse {
    /// `error: 503`, or `error: {status, retry_after, headers, body}`.
    init(decoding node: ConfigNode) throws(ConfigError) {
        if case .scalar = node.node {
            self.init(status: try node.httpStatus())
            return
        }
        let map = try node.mapping(keys: ["status", "retry_after", "headers", "body"])
        guard let status = map["status"] else { throw node.error("missing required key 'status'") }
        self.init(status: try status.httpStatus())
        if let value = map["retry_after"] { retryAfter = try value.duration() }
        if let value = map["headers"] { headers = try value.headerPairs() }
        if let value = map["body"] { body = try value.string() }
    }
}

extension ConfigNode {
    /// An HTTP status from 100 to 599.
    func httpStatus() throws(ConfigError) -> Int {
        let status = try int()
        guard (100...599).contains(status) else { throw error("expected an HTTP status from 100 to 599; got \(status)") }
        return status
    }

    /// `5s`, or `{min: 1s, max: 3s}`.
    func durationRange() throws(ConfigError) -> (Duration, Duration) {
        if case .scalar = node {
            let fixed = try duration()
            return (fixed, fixed)
        }
        let map = try mapping(keys: ["min", "max"])
        guard let low = map["min"], let high = map["max"] else { throw error("a range needs both min and max") }
        let range = (try low.duration(), try high.duration())
        guard range.0 <= range.1 else { throw high.error("max must not be less than min") }
        return range
    }

    /// One endpoint template, `[METHOD ]/path/{param}`.
    func endpointTemplate() throws(ConfigError) -> EndpointTemplate {
        let text = try string()
        switch EndpointTemplate.parse(text.trimmingCharacters(in: .whitespaces)) {
        case .success(let template): return template
        case .failure(let problem): throw error("not an endpoint template: \(problem.message); got '\(text)'")
        }
    }

    /// A mapping of names to string values, in the order written.
    func headerPairs() throws(ConfigError) -> [MockHeader] {
        guard case .mapping(let mapping) = node else { throw error("expected a mapping of names to values, got \(kindName)") }
        var pairs: [MockHeader] = []
        for (keyNode, valueNode) in mapping {
            guard case .scalar(let key) = keyNode, !key.string.isEmpty else { throw error("names must be plain, non-empty strings") }
            let value = child(key.string, valueNode)
            pairs.append(MockHeader(key.string, try value.string()))
        }
        return pairs
    }
}
