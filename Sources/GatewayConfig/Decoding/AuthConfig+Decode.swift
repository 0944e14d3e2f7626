/// Decoding of `upstreams[i].auth`. The keys allowed depend on `type`; a key
/// of another type is named as such. Secrets are resolved here (env, file or
/// inline); value checks that need no YAML node live in validation.
extension AuthConfig {
    static let typeNames = ["bearer", "header", "basic", "query", "oauth2"]
    static let commonKeys = ["type", "client_auth"]
    static let oauth2Keys =
        ["grant", "token_url"] + Secret.keys("client_id") + Secret.keys("client_secret") + Secret.keys("refresh_token")
        + ["scope", "audience", "client_auth_method", "refresh_before_expiry"]

    /// The keys of one type, besides `type` and `client_auth`.
    static func keys(forType type: String) -> [String] {
        switch type {
        case "bearer": Secret.keys("token")
        case "header": ["name"] + Secret.keys("value")
        case "basic": ["username"] + Secret.keys("password")
        case "query": ["param"] + Secret.keys("value")
        default: oauth2Keys
        }
    }

    /// Every key of every type, in documentation order.
    static let allKeys: [String] = {
        var keys = commonKeys
        for type in typeNames {
            for key in AuthConfig.keys(forType: type) where !keys.contains(key) { keys.append(key) }
        }
        return keys
    }()

    /// Throws when `type` is missing or unknown (nothing else can be checked
    /// without it); other mistakes are recorded, with empty stand-ins.
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: AuthConfig.allKeys)
        let typeList = AuthConfig.typeNames.joined(separator: ", ")
        guard let typeNode = map["type"] else { throw node.error("missing required key 'type' (one of: \(typeList))") }
        let type = try typeNode.oneOf(AuthConfig.typeNames)
        let allowed = AuthConfig.commonKeys + AuthConfig.keys(forType: type)
        for key in AuthConfig.allKeys where map.contains(key) && !allowed.contains(key) {
            node.context.issues.reject(
                node.child(key, map.entries[key]!.node).error(
                    "'\(key)' does not apply to type \(type); expected one of: \(allowed.joined(separator: ", "))"))
        }
        var clientAuth = ClientAuthMode.replace
        map.decode("client_auth", into: &clientAuth) { ClientAuthMode(rawValue: try $0.oneOf(["replace", "keep"]))! }
        func required(_ key: String, _ what: String) -> String {
            map.required(key, hint: what) { try $0.string() } ?? ""
        }
        let kind: Kind
        switch type {
        case "bearer":
            kind = .bearer(token: Secret.required(from: map, base: "token"))
        case "header":
            let name = required("name", "the header to send, e.g. X-API-Key")
            kind = .header(name: name, value: Secret.required(from: map, base: "value"))
        case "basic":
            let username = required("username", "the Basic auth user name")
            kind = .basic(username: username, password: Secret.required(from: map, base: "password"))
        case "query":
            let parameter = required("param", "the query parameter to add, e.g. api_key")
            kind = .query(parameter: parameter, value: Secret.required(from: map, base: "value"))
        default:
            kind = .oauth2(OAuth2Config(decoding: map))
        }
        self.init(kind: kind, clientAuth: clientAuth)
    }
}

extension OAuth2Config {
    /// Never throws: a missing or unknown `grant` is recorded, and the
    /// checks that depend on it are skipped.
    init(decoding map: ConfigMapping) {
        let node = map.owner
        let grants = "refresh_token, client_credentials"
        let grant = map.required("grant", hint: "one of: \(grants)") { Grant(rawValue: try $0.oneOf(["refresh_token", "client_credentials"]))! }
        let tokenURL = map.required("token_url", hint: "the token endpoint, e.g. https://auth.example.com/oauth/token") {
            try $0.nonEmptyString()
        }
        let clientID = Secret.required(from: map, base: "client_id")
        let clientSecret = Secret.optional(from: map, base: "client_secret")
        let refreshToken = Secret.optional(from: map, base: "refresh_token")
        if grant == .clientCredentials, let key = Secret.keys("refresh_token").first(where: { map.contains($0) }) {
            node.context.issues.reject(
                node.child(key, map.entries[key]!.node).error(
                    "a refresh token applies only to grant refresh_token; grant client_credentials obtains tokens with the client secret"))
        }
        self.init(
            grant: grant ?? .clientCredentials, tokenURL: tokenURL ?? "", clientID: clientID, clientSecret: clientSecret,
            refreshToken: refreshToken)
        map.decode("scope", into: &scope) { try $0.nonEmptyString() }
        map.decode("audience", into: &audience) { try $0.nonEmptyString() }
        map.decode("client_auth_method", into: &clientAuthMethod) {
            ClientAuthMethod(rawValue: try $0.oneOf(["client_secret_basic", "client_secret_post"]))!
        }
        map.decode("refresh_before_expiry", into: &refreshBeforeExpiry) { try $0.duration() }
        // Without a grant, which secrets the auth needs is unknown: its own checks are skipped.
        if grant == nil { node.context.issues.markStandIn(node.path) }
    }
}
