import Foundation

/// Decoding of `proxy_auth` and its secrets. A secret is resolved at load
/// time from exactly one of `password_env`, `password_file` or `password`;
/// errors name the variable or file, never the value.
extension ProxyAuthConfig {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["realm", "users"])
        var realm = ProxyAuthConfig.defaultRealm
        map.decode("realm", into: &realm) { try $0.string() }
        guard let usersNode = map["users"] else {
            throw node.context.error(
                node.path.isEmpty ? "users" : "\(node.path).users",
                "at least one user is required"
            )
        }
        let users = try usersNode.elements(of: "users") { try ProxyUser(decoding: $0) }
        self.init(realm: realm, users: users)
    }
}

extension ProxyUser {
    init(decoding node: ConfigNode) throws(ConfigError) {
        let map = try node.mapping(keys: ["username", "password_env", "password_file", "password"])
        let username = map.required("username") { try $0.string() } ?? ""
        self.init(username: username, password: Secret.required(from: map))
    }
}
