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

extension Secret {
    static let keys = ["password_env", "password_file", "password"]

    /// Resolves the one secret key present in `map` (a mapping at `owner`).
    init(decodingFrom owner: ConfigNode, _ map: ConfigMapping) throws(ConfigError) {
        let present = Secret.keys.filter { map.contains($0) }
        guard present.count == 1, let node = map.entries[present[0]] else {
            let found = present.isEmpty ? "none" : present.joined(separator: " and ")
            throw owner.error("exactly one of password_env, password_file, password is required; found \(found)")
        }
        guard !node.isNull else { throw node.error("must not be empty") }
        switch present[0] {
        case "password_env":
            let name = try node.nonEmptyString()
            guard let value = owner.context.environment[name] else {
                throw node.error("environment variable \(name) is not set")
            }
            guard !value.isEmpty else { throw node.error("environment variable \(name) is empty") }
            self.init(source: .env(name), value: value)
        case "password_file":
            let path = owner.context.resolvePath(try node.nonEmptyString())
            self.init(source: .file(path), value: try Secret.readFile(path, node: node))
        default:
            let value = try node.string()
            guard !value.isEmpty else { throw node.error("must not be empty") }
            self.init(source: .inline, value: value)
        }
    }

    /// The file's contents without trailing newlines.
    static func readFile(_ path: String, node: ConfigNode) throws(ConfigError) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw node.error("secret file \(path) does not exist")
        }
        guard !isDirectory.boolValue else { throw node.error("secret file \(path) is a directory") }
        guard FileManager.default.isReadableFile(atPath: path),
            let data = FileManager.default.contents(atPath: path)
        else {
            throw node.error("secret file \(path) is not readable")
        }
        guard var text = String(data: data, encoding: .utf8) else {
            throw node.error("secret file \(path) is not UTF-8 text")
        }
        while let last = text.unicodeScalars.last, last == "\n" || last == "\r" {
            text.unicodeScalars.removeLast()
        }
        guard !text.isEmpty else { throw node.error("secret file \(path) is empty") }
        return text
    }
}
