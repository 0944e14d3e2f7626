import Foundation

/// Decoding of `upstreams[i].mocks` and `upstreams[i].replay`.
extension MocksConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["enabled", "unmatched", "rules"])
        if let value = map["enabled"] { enabled = try value.bool() }
        if let value = map["unmatched"] { unmatched = try value.unmatchedMode() }
        if let value = map["rules"] {
            for element in try value.sequence(of: "mock rules") { rules.append(try MockRule(decoding: element)) }
        }
    }
}

extension MockRule {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["endpoint", "query", "headers", "body_contains", "nth", "response"])
        guard let endpoint = map["endpoint"] else { throw node.error("missing required key 'endpoint'") }
        guard let response = map["response"] else { throw node.error("missing required key 'response'") }
        self.init(endpoint: try endpoint.endpointTemplate(), response: try MockResponse(decoding: response))
        if let value = map["query"] { query = try value.headerPairs() }
        if let value = map["headers"] { headers = try value.headerPairs() }
        if let value = map["body_contains"] {
            if case .scalar = value.node {
                bodyContains = [try value.nonEmptyString()]
            } else {
                for element in try value.sequence(of: "texts") { bodyContains.append(try element.nonEmptyString()) }
            }
        }
        if let value = map["nth"] {
            let n = try value.int()
            guard n >= 1 else { throw value.error("nth counts calls from 1; got \(n)") }
            nth = n
        }
    }
}

extension MockResponse {
    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["status", "headers", "body", "file", "template", "delay"])
        if let value = map["status"] { status = try value.httpStatus() }
        if let value = map["headers"] { headers = try value.headerPairs() }
        if map["body"] != nil, let file = map["file"] {
            throw file.error("a response has a body or a file, not both")
        }
        if let value = map["body"] { body = .inline(try value.string()) }
        if let value = map["file"] {
            let path = value.context.resolvePath(try value.nonEmptyString())
            guard FileManager.default.isReadableFile(atPath: path) else { throw value.error("file \(path) does not exist or is not readable") }
            body = .file(path)
        }
        if let value = map["template"] { template = try value.bool() }
        if let value = map["delay"] { delay = try value.duration() }
    }
}

extension RecordConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["enabled", "har"])
        guard let har = map["har"] else { throw node.error("missing required key 'har'") }
        self.init(har: har.context.resolvePath(try har.nonEmptyString()))
        if let value = map["enabled"] { enabled = try value.bool() }
    }
}

extension ReplayConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["enabled", "har", "match", "unmatched", "timing"])
        guard let har = map["har"] else { throw node.error("missing required key 'har'") }
        let path = har.context.resolvePath(try har.nonEmptyString())
        guard FileManager.default.isReadableFile(atPath: path) else { throw har.error("HAR file \(path) does not exist or is not readable") }
        guard let data = FileManager.default.contents(atPath: path),
            let json = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let log = json["log"] as? [String: Any], log["entries"] is [Any]
        else { throw har.error("\(path) is not a HAR file: expected JSON with log.entries (HAR 1.2)") }
        self.init(har: path)
        if let value = map["enabled"] { enabled = try value.bool() }
        if let value = map["match"] {
            match = []
            for element in try value.sequence(of: "match rules") {
                let text = try element.string()
                guard let rule = ReplayMatch(rawValue: text.lowercased()) else {
                    throw element.error("expected one of: \(ReplayMatch.allCases.map(\.rawValue).joined(separator: ", ")); got '\(text)'")
                }
                match.insert(rule)
            }
        }
        if let value = map["unmatched"] { unmatched = try value.unmatchedMode() }
        if let value = map["timing"] {
            let text = try value.string()
            switch text.lowercased() {
            case "recorded": recordedTiming = true
            case "none": recordedTiming = false
            default: throw value.error("expected one of: recorded, none; got '\(text)'")
            }
        }
    }
}

extension ConfigNode {
    func unmatchedMode() throws(ConfigError) -> UnmatchedMode {
        let text = try string()
        guard let mode = UnmatchedMode(rawValue: text.lowercased()) else { throw error("expected one of: pass, block; got '\(text)'") }
        return mode
    }
}
