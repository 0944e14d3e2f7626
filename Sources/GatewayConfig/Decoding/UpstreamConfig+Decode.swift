import Foundation
import GatewayCore

/// Decoding of one `upstreams` entry and its `tls` section.
extension UpstreamConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: [
            "name", "hosts", "origin", "ports", "tls", "http_version", "endpoints", "intercept", "auth", "retry", "rate_limit",
            "faults", "mocks", "replay",
        ])
        guard let nameNode = map["name"] else { throw node.error("missing required key 'name'") }
        guard let hostsNode = map["hosts"] else { throw node.error("missing required key 'hosts'") }
        let name = try nameNode.string()
        let hosts = try hostsNode.hostPatterns()
        var origin: UpstreamOrigin?
        if let originNode = map["origin"] {
            let text = try originNode.string()
            switch UpstreamOrigin.parse(text) {
            case .success(let parsed): origin = parsed
            case .failure(.userInfo):
                // Never echo the text: it holds credentials.
                throw originNode.error(UpstreamOrigin.OriginProblem.userInfo.message)
            case .failure(let problem): throw originNode.error("\(problem.message); got '\(text)'")
            }
        }
        var tls = UpstreamTLSSettings.standard
        if let tlsNode = map["tls"] {
            if let origin, origin.scheme == .http {
                throw tlsNode.error("tls settings have no effect: origin \(origin) is plain http")
            }
            tls = try UpstreamTLSSettings(decoding: tlsNode)
        }
        self.init(name: name, hosts: hosts, origin: origin, tls: tls)
        if let portsNode = map["ports"] {
            if let origin {
                throw portsNode.error("ports has no effect with an origin: the credential goes to \(origin) only")
            }
            ports = try portsNode.credentialPorts()
        }
        if let value = map["http_version"] { httpVersion = try value.upstreamHTTPVersion() }
        if let value = map["endpoints"] { endpoints = try value.endpointTemplates() }
        if let value = map["intercept"] { intercept = try value.bool() }
        if let value = map["auth"] { auth = try AuthConfig(decoding: value) }
        if let value = map["retry"] { retry = try RetryConfig(decoding: value) }
        if let value = map["rate_limit"] { rateLimit = try RateLimitConfig(decoding: value) }
        if let value = map["faults"] { faults = try FaultsConfig(decoding: value) }
        if let value = map["mocks"] { mocks = try MocksConfig(decoding: value) }
        if let value = map["replay"] { replay = try ReplayConfig(decoding: value) }
    }
}

extension ConfigNode {
    /// `ports`: a non-empty list of ports 1–65535.
    func credentialPorts() throws(ConfigError) -> [Int] {
        var ports: [Int] = []
        for element in try sequence(of: "ports") {
            let port = try element.int()
            guard (1...65535).contains(port) else { throw element.error("port must be an integer from 1 to 65535; got \(port)") }
            ports.append(port)
        }
        guard !ports.isEmpty else { throw error("must list at least one port") }
        return ports
    }

    /// `http_version`: auto, http1 or http2 (any case).
    func upstreamHTTPVersion() throws(ConfigError) -> UpstreamHTTPVersion {
        let text = try string()
        guard let version = UpstreamHTTPVersion(rawValue: text.lowercased()) else {
            throw error("expected one of: auto, http1, http2; got '\(text)'")
        }
        return version
    }

    /// A list of `[METHOD ]/path/{param}` templates.
    func endpointTemplates() throws(ConfigError) -> [EndpointTemplate] {
        var templates: [EndpointTemplate] = []
        for element in try sequence(of: "endpoint templates") {
            let text = try element.string()
            switch EndpointTemplate.parse(text.trimmingCharacters(in: .whitespaces)) {
            case .success(let template): templates.append(template)
            case .failure(let problem): throw element.error("not an endpoint template: \(problem.message); got '\(text)'")
            }
        }
        return templates
    }
}

extension UpstreamTLSSettings {
    static let pinMessage = "not a pin: expected 'sha256/' followed by 44 base64 characters (32 bytes)"

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["pins", "pin_mode", "ca_file", "insecure_skip_verify"])
        if let value = map["pins"] {
            for element in try value.sequence(of: "pins") {
                let text = try element.string()
                guard let pin = SPKIPin(text.trimmingCharacters(in: .whitespaces)) else {
                    throw element.error(UpstreamTLSSettings.pinMessage)
                }
                pins.append(pin)
            }
        }
        if let value = map["pin_mode"] {
            let text = try value.string()
            guard let mode = PinMode(rawValue: text.lowercased()) else {
                throw value.error("expected one of: enforce, report; got '\(text)'")
            }
            pinMode = mode
        }
        if let value = map["ca_file"] {
            caFile = try UpstreamTLSSettings.checkedCAFile(value)
        }
        if let value = map["insecure_skip_verify"] { insecureSkipVerify = try value.bool() }
    }

    /// The CA file's absolute path, after checking it exists and is readable.
    static func checkedCAFile(_ node: ConfigNode) throws(ConfigError) -> String {
        let path = node.context.resolvePath(try node.nonEmptyString())
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw node.error("CA file \(path) does not exist")
        }
        guard !isDirectory.boolValue else { throw node.error("CA file \(path) is a directory, expected a PEM file") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw node.error("CA file \(path) is not readable")
        }
        return path
    }
}
