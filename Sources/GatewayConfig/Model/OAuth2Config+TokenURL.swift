extension OAuth2Config {
    /// `token_url` split into where to connect and the request target
    /// (`/oauth/token?x=1`); nil when it is not an absolute http(s) URL.
    public var tokenEndpoint: (origin: UpstreamOrigin, target: String)? {
        OAuth2Config.tokenEndpoint(of: tokenURL)
    }

    /// `text` as a token URL (the one parse config validation uses too).
    public static func tokenEndpoint(of text: String) -> (origin: UpstreamOrigin, target: String)? {
        guard case .success(let endpoint) = parseTokenURL(text) else { return nil }
        return endpoint
    }

    /// The parse with a reason for failure. Messages never quote the URL: it
    /// could hold credentials (user info, a secret in the query).
    static func parseTokenURL(_ text: String) -> Result<(origin: UpstreamOrigin, target: String), TokenURLProblem> {
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            return .failure(.characters)
        }
        guard let separator = text.range(of: "://") else { return .failure(.notAbsolute) }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return .failure(.scheme) }
        let rest = text[separator.upperBound...]
        guard !rest.contains("#") else { return .failure(.fragment) }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { return .failure(.userInfo) }
        var target = String(rest[authorityEnd...])
        if !target.hasPrefix("/") { target = "/" + target }
        switch UpstreamOrigin.parse("\(scheme)://\(authority)") {
        case .success(let origin): return .success((origin, target))
        case .failure(.port): return .failure(.port)
        case .failure: return .failure(.host)
        }
    }

    enum TokenURLProblem: Error, Equatable {
        case characters, notAbsolute, scheme, fragment, userInfo, port, host

        var message: String {
            let shape = "expected an absolute http(s) URL like https://auth.example.com/oauth/token"
            switch self {
            case .characters: return "must not contain spaces or control characters; \(shape)"
            case .notAbsolute: return shape
            case .scheme: return "scheme must be http or https; \(shape)"
            case .fragment: return "must not contain a fragment (#...); \(shape)"
            case .userInfo: return "must not contain credentials (user@host); use client_id and client_secret"
            case .port: return "port must be an integer from 1 to 65535"
            case .host: return "not a valid host name or IP address; \(shape)"
            }
        }
    }
}
