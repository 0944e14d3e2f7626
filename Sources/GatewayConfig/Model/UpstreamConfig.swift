public import GatewayCore

/// One `upstreams` entry: settings for requests whose target host matches `hosts`.
public struct UpstreamConfig: Sendable, Equatable {
    /// Unique, `[A-Za-z0-9_-]+`; used in metric labels and logs.
    public var name: String
    /// Non-empty; the first upstream (in file order) with a matching pattern wins.
    public var hosts: [HostPattern]
    /// When set, requests for `hosts` are sent here instead of to the host the
    /// client named (e.g. originate TLS for a client speaking plain http).
    public var origin: UpstreamOrigin?
    /// `ports`: the ports of `hosts` the credential may be sent to over TLS
    /// (nil = 443 only); not allowed together with `origin`. See ``CredentialScope``.
    public var ports: [Int]?
    /// How the upstream's certificate is verified (pins, CA file).
    public var tls: UpstreamTLSSettings
    /// `http_version`: auto (ALPN offers h2 and http/1.1 over https; HTTP/1.1
    /// over plain http), http1, or http2 (h2 alone over https, prior-knowledge
    /// h2c over plain http).
    public var httpVersion: UpstreamHTTPVersion
    /// `endpoints`: path templates naming endpoints in metrics and traces,
    /// tried in order before automatic normalization.
    public var endpoints: [EndpointTemplate]
    /// `intercept`: terminate TLS of `CONNECT`s to these hosts with the local
    /// CA, so every policy applies inside; false = blind tunnel.
    public var intercept: Bool
    /// `auth`: credentials added to requests for these hosts; nil = none.
    public var auth: AuthConfig?
    /// `retry`: nil = no retries.
    public var retry: RetryConfig?
    /// `rate_limit`: nil = no rate limiting.
    public var rateLimit: RateLimitConfig?
    /// `faults`: injected errors, latency and resets; nil = none.
    public var faults: FaultsConfig?
    /// `mocks`: answers in the upstream's place; nil = none.
    public var mocks: MocksConfig?
    /// `replay`: answers from a HAR file; nil = none.
    public var replay: ReplayConfig?
    /// `record`: exchanges written to a HAR file; nil = none.
    public var record: RecordConfig?

    public init(
        name: String,
        hosts: [HostPattern],
        origin: UpstreamOrigin? = nil,
        ports: [Int]? = nil,
        tls: UpstreamTLSSettings = .standard,
        endpoints: [EndpointTemplate] = [],
        intercept: Bool = false,
        auth: AuthConfig? = nil,
        retry: RetryConfig? = nil,
        rateLimit: RateLimitConfig? = nil,
        httpVersion: UpstreamHTTPVersion = .auto
    ) {
        self.name = name
        self.hosts = hosts
        self.origin = origin
        self.ports = ports
        self.tls = tls
        self.endpoints = endpoints
        self.intercept = intercept
        self.auth = auth
        self.retry = retry
        self.rateLimit = rateLimit
        self.httpVersion = httpVersion
    }

    /// Where `auth` may be sent (scheme, host, port).
    public var credentialScope: CredentialScope { CredentialScope(upstream: self) }

    /// The first configured endpoint template matching the request, if any.
    public func endpoint(method: String, path: Substring) -> EndpointTemplate? {
        endpoints.first { $0.matches(method: method, path: path) }
    }

    /// True when one of `hosts` matches `host` (case-insensitive).
    public func matches(host: String) -> Bool {
        let normalized = AccessConfig.normalize(host)
        return hosts.contains { $0.matches(normalized) }
    }
}

/// `scheme://host[:port]`: where an upstream's requests are sent.
public struct UpstreamOrigin: Sendable, Equatable, CustomStringConvertible {
    public var scheme: UpstreamScheme
    /// Host name or IP address; IPv6 without brackets.
    public var host: String
    /// The explicit port, or the scheme's default (80, 443).
    public var port: Int

    public init(scheme: UpstreamScheme, host: String, port: Int? = nil) {
        self.scheme = scheme
        self.host = host
        self.port = port ?? scheme.defaultPort
    }

    /// Parses `http(s)://host[:port]` with an empty or `/` path; nil otherwise.
    public init?(_ text: String) {
        guard case .success(let origin) = UpstreamOrigin.parse(text) else { return nil }
        self = origin
    }

    /// `https://api.example.com`, with the port only when not the default.
    public var description: String {
        let hostText = host.contains(":") ? "[\(host)]" : host
        let portText = port == scheme.defaultPort ? "" : ":\(port)"
        return "\(scheme.rawValue)://\(hostText)\(portText)"
    }

    /// The parse with an explanation on failure (for config errors).
    static func parse(_ text: String) -> Result<UpstreamOrigin, OriginProblem> {
        guard let separator = text.range(of: "://") else { return .failure(.expected) }
        guard let scheme = UpstreamScheme(rawValue: text[..<separator.lowerBound].lowercased()) else {
            return .failure(.scheme)
        }
        var authority = text[separator.upperBound...]
        if let slash = authority.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard authority[slash...] == "/" else { return .failure(.path) }
            authority = authority[..<slash]
        }
        guard !authority.contains("@") else { return .failure(.userInfo) }
        var hostText = authority
        var port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority[colon...].contains("]") {
            hostText = authority[..<colon]
            let portText = authority[authority.index(after: colon)...]
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCIIDigit),
                let value = Int(portText), (1...65535).contains(value)
            else { return .failure(.port) }
            port = value
        }
        guard let host = IPAddressText.urlHost(hostText) else { return .failure(.host) }
        return .success(UpstreamOrigin(scheme: scheme, host: host, port: port))
    }

    enum OriginProblem: Error, Equatable {
        case expected, scheme, path, userInfo, port, host

        var message: String {
            let shape = "expected an origin like https://api.example.com or http://127.0.0.1:8081"
            switch self {
            case .expected: return shape
            case .scheme: return "scheme must be http or https; \(shape)"
            case .path: return "an origin has no path, query or fragment; \(shape)"
            case .userInfo: return "an origin must not contain credentials (user@host)"
            case .port: return "port must be an integer from 1 to 65535"
            case .host: return "not a valid host name or IP address; \(shape)"
            }
        }
    }
}
