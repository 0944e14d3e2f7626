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

    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: AuthConfig.allKeys)
        let typeList = AuthConfig.typeNames.joined(separator: ", ")
        guard let typeNode = map["type"] else { throw node.error("missing required key 'type' (one of: \(typeList))") }
        let type = try typeNode.string().lowercased()
        guard AuthConfig.typeNames.contains(type) else {
            throw typeNode.error("expected one of: \(typeList); got '\(try typeNode.string())'")
        }
        let allowed = AuthConfig.commonKeys + AuthConfig.keys(forType: type)
        for key in AuthConfig.allKeys where map.contains(key) && !allowed.contains(key) {
            throw node.child(key, map.entries[key]!.node).error(
                "'\(key)' does not apply to type \(type); expected one of: \(allowed.joined(separator: ", "))")
        }
        var clientAuth = ClientAuthMode.replace
        if let value = map["client_auth"] {
            let text = try value.string()
            guard let mode = ClientAuthMode(rawValue: text.lowercased()) else {
                throw value.error("expected one of: replace, keep; got '\(text)'")
            }
            clientAuth = mode
        }
        func required(_ key: String, _ what: String) throws(ConfigError) -> String {
            guard let value = map[key] else { throw node.error("missing required key '\(key)' (\(what))") }
            return try value.string()
        }
        let kind: Kind
        switch type {
        case "bearer":
            kind = .bearer(token: try Secret(decodingFrom: node, map, base: "token"))
        case "header":
            let name = try required("name", "the header to send, e.g. X-API-Key")
            kind = .header(name: name, value: try Secret(decodingFrom: node, map, base: "value"))
        case "basic":
            let username = try required("username", "the Basic auth user name")
            kind = .basic(username: username, password: try Secret(decodingFrom: node, map, base: "password"))
        case "query":
            let parameter = try required("param", "the query parameter to add, e.g. api_key")
            kind = .query(parameter: parameter, value: try Secret(decodingFrom: node, map, base: "value"))
        default:
            kind = .oauth2(try OAuth2Config(decoding: node, map))
        }
        self.init(kind: kind, clientAuth: clientAuth)
    }
}

extension OAuth2Config {
    init(decoding node: ConfigNode, _ map: ConfigMapping) throws(ConfigError) {
        let grants = "refresh_token, client_credentials"
        guard let grantNode = map["grant"] else { throw node.error("missing required key 'grant' (one of: \(grants))") }
        let grantText = try grantNode.string()
        guard let grant = Grant(rawValue: grantText.lowercased()) else {
            throw grantNode.error("expected one of: \(grants); got '\(grantText)'")
        }
        guard let urlNode = map["token_url"] else {
            throw node.error("missing required key 'token_url' (the token endpoint, e.g. https://auth.example.com/oauth/token)")
        }
        let tokenURL = try urlNode.nonEmptyString()
        let clientID = try Secret(decodingFrom: node, map, base: "client_id")
        let clientSecret = try Secret.decodeOptional(from: node, map, base: "client_secret")
        let refreshToken = try Secret.decodeOptional(from: node, map, base: "refresh_token")
        if grant == .clientCredentials, let key = Secret.keys("refresh_token").first(where: { map.contains($0) }) {
            throw node.child(key, map.entries[key]!.node).error(
                "a refresh token applies only to grant refresh_token; grant client_credentials obtains tokens with the client secret")
        }
        self.init(grant: grant, tokenURL: tokenURL, clientID: clientID, clientSecret: clientSecret, refreshToken: refreshToken)
        if let value = map["scope"] { scope = try value.nonEmptyString() }
        if let value = map["audience"] { audience = try value.nonEmptyString() }
        if let value = map["client_auth_method"] {
            let text = try value.string()
            guard let method = ClientAuthMethod(rawValue: text.lowercased()) else {
                throw value.error("expected one of: client_secret_basic, client_secret_post; got '\(text)'")
            }
            clientAuthMethod = method
        }
        if let value = map["refresh_before_expiry"] { refreshBeforeExpiry = try value.duration() }
    }
}
