import Foundation
import GatewayCore

/// Decoding of one `upstreams` entry and its `tls` section.
extension UpstreamConfig {
    static let keys = [
        "name", "hosts", "origin", "ports", "tls", "http_version", "endpoints", "intercept", "auth", "retry", "rate_limit",
        "faults", "mocks", "replay", "record",
    ]

    /// The `upstreams` list. An entry that is no mapping keeps its place as a
    /// stand-in, so the entries after it are still checked under their own index.
    static func decodeList(_ node: ConfigNode) throws(ConfigError) -> [UpstreamConfig] {
        try node.sequence(of: "upstreams").map { element in
            element.decoded { try UpstreamConfig(decoding: $0) }
                ?? UpstreamConfig(name: "", hosts: [], origin: nil, tls: .standard)
        }
    }

    /// One entry; a missing `name` or `hosts` is recorded and an empty one stands in.
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: UpstreamConfig.keys)
        let name = map.required("name") { try $0.string() } ?? ""
        let hosts = map.required("hosts") { try $0.hostPatterns() } ?? []
        let origin = map.decode("origin") { try UpstreamOrigin(decoding: $0) }
        var tls = UpstreamTLSSettings.standard
        if let tlsNode = map["tls"] {
            if let origin, origin.scheme == .http {
                node.context.issues.reject(tlsNode.error("tls settings have no effect: origin \(origin) is plain http"))
            } else {
                tls = tlsNode.decoded { try UpstreamTLSSettings(decoding: $0) } ?? tls
            }
        }
        self.init(name: name, hosts: hosts, origin: origin, tls: tls)
        if let portsNode = map["ports"] {
            if let origin {
                node.context.issues.reject(portsNode.error("ports has no effect with an origin: the credential goes to \(origin) only"))
            } else {
                ports = portsNode.decoded { try $0.credentialPorts() } ?? ports
            }
        }
        map.decode("http_version", into: &httpVersion) { try $0.upstreamHTTPVersion() }
        map.decode("endpoints", into: &endpoints) { try $0.endpointTemplates() }
        map.decode("intercept", into: &intercept) { try $0.bool() }
        map.decode("auth", into: &auth) { try AuthConfig(decoding: $0) }
        map.decode("retry", into: &retry) { try RetryConfig(decoding: $0) }
        map.decode("rate_limit", into: &rateLimit) { try RateLimitConfig(decoding: $0) }
        map.decode("faults", into: &faults) { try FaultsConfig(decoding: $0) }
        map.decode("mocks", into: &mocks) { try MocksConfig(decoding: $0) }
        map.decode("replay", into: &replay) { try ReplayConfig(decoding: $0) }
        map.decode("record", into: &record) { try RecordConfig(decoding: $0) }
    }
}

extension UpstreamOrigin {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let text = try node.string()
        switch UpstreamOrigin.parse(text) {
        case .success(let parsed): self = parsed
        case .failure(.userInfo):
            // Never echo the text: it holds credentials.
            throw node.error(UpstreamOrigin.OriginProblem.userInfo.message)
        case .failure(let problem): throw node.error("\(problem.message); got '\(text)'")
        }
    }
}

extension ConfigNode {
    /// `ports`: a non-empty list of ports 1–65535.
    func credentialPorts() throws(ConfigError) -> [Int] {
        let ports = try elements(of: "ports") { element throws(ConfigError) in
            let port = try element.int()
            guard (1...65535).contains(port) else { throw element.error("port must be an integer from 1 to 65535; got \(port)") }
            return port
        }
        guard case .sequence(let written) = node, !written.isEmpty else { throw error("must list at least one port") }
        return ports
    }

    /// `http_version`: auto, http1 or http2 (any case).
    func upstreamHTTPVersion() throws(ConfigError) -> UpstreamHTTPVersion {
        UpstreamHTTPVersion(rawValue: try oneOf(["auto", "http1", "http2"]))!
    }

    /// A list of `[METHOD ]/path/{param}` templates.
    func endpointTemplates() throws(ConfigError) -> [EndpointTemplate] {
        try elements(of: "endpoint templates") { element throws(ConfigError) in
            let text = try element.string()
            switch EndpointTemplate.parse(text.trimmingCharacters(in: .whitespaces)) {
            case .success(let template): return template
            case .failure(let problem): throw element.error("not an endpoint template: \(problem.message); got '\(text)'")
            }
        }
    }
}

extension UpstreamTLSSettings {
    static let pinMessage = "not a pin: expected 'sha256/' followed by 44 base64 characters (32 bytes)"

    init(decoding node: ConfigNode) throws(ConfigError) {
        self.init()
        let map = try node.mapping(keys: ["pins", "pin_mode", "ca_file", "insecure_skip_verify", "client_certificate"])
        map.decode("pins", into: &pins) { node throws(ConfigError) in
            try node.elements(of: "pins") { element throws(ConfigError) in
                guard let pin = SPKIPin(try element.string().trimmingCharacters(in: .whitespaces)) else {
                    throw element.error(UpstreamTLSSettings.pinMessage)
                }
                return pin
            }
        }
        map.decode("pin_mode", into: &pinMode) { PinMode(rawValue: try $0.oneOf(["enforce", "report"]))! }
        map.decode("ca_file", into: &caFile) { try UpstreamTLSSettings.checkedCAFile($0) }
        map.decode("insecure_skip_verify", into: &insecureSkipVerify) { try $0.bool() }
        clientCertificate = map.decode("client_certificate") { try UpstreamClientCertificate.decode($0) } ?? nil
    }

    /// The CA file's absolute path, after checking it exists and is readable.
    static func checkedCAFile(_ node: ConfigNode) throws(ConfigError) -> String {
        let path = node.context.resolvePath(try node.nonEmptyString())
        if let problem = caFileProblem(path) { throw node.error(problem) }
        return path
    }

    /// Why the CA file at `path` cannot be used (missing, a directory, not readable), or nil.
    static func caFileProblem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return "CA file \(path) does not exist" }
        guard !isDirectory.boolValue else { return "CA file \(path) is a directory, expected a PEM file" }
        guard FileManager.default.isReadableFile(atPath: path) else { return "CA file \(path) is not readable" }
        return nil
    }
}
