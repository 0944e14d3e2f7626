import Foundation

/// Decoding of `proxy_auth` and its secrets. A secret is resolved at load
/// time from exactly one of `password_env`, `password_file` or `password`;
/// errors name the variable or file, never the value.
extension ProxyAuthConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["realm", "users"])
        var realm = ProxyAuthConfig.defaultRealm
        if let value = map["realm"] { realm = try value.string() }
        guard let usersNode = map["users"] else {
            throw node.context.error(
                node.path.isEmpty ? "users" : "\(node.path).users",
                "at least one user is required"
            )
        }
        var users: [ProxyUser] = []
        for element in try usersNode.sequence(of: "users") {
            users.append(try ProxyUser(decoding: element))
        }
        self.init(realm: realm, users: users)
    }
}

extension ProxyUser {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["username", "password_env", "password_file", "password"])
        guard let usernameNode = map["username"] else {
            throw node.error("missing required key 'username'")
        }
        self.init(username: try usernameNode.string(), password: try Secret(decodingFrom: node, map))
    }
}
