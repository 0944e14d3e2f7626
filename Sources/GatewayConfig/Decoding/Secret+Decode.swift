import Foundation

/// Decoding of secrets. A secret named `<base>` (`password`, `token`,
/// `client_secret`...) is resolved at load time from exactly one of
/// `<base>_env`, `<base>_file` or `<base>`; errors name the variable or file,
/// never the value.
extension Secret {
    /// The value of a secret not read (``SecretLoading/skip``).
    static let unresolvedPlaceholder = "unresolved"

    /// The three keys of a secret: `<base>_env`, `<base>_file`, `<base>`.
    static func keys(_ base: String) -> [String] {
        ["\(base)_env", "\(base)_file", base]
    }

    /// The `base` secret of `map`, which must be written. A mistake (none or
    /// several of its keys, an unset variable, an unreadable file) is recorded
    /// and a placeholder stands in: loading goes on to find the next mistake.
    static func required(from map: ConfigMapping, base: String = "password") -> Secret {
        let owner = map.owner
        if let secret = optional(from: map, base: base) { return secret }
        let keys = Secret.keys(base)
        if !keys.contains(where: { map.contains($0) }) {
            let path = owner.path.isEmpty ? base : "\(owner.path).\(base)"
            owner.context.issues.report(
                owner.path, "exactly one of \(keys.joined(separator: ", ")) is required; found none", standIn: path)
        }
        return Secret(source: .inline, value: Secret.unresolvedPlaceholder)
    }

    /// The `base` secret of `map`, or nil when none of its keys is written.
    /// A mistake is recorded and a placeholder stands in (nil when it cannot
    /// be told which of the keys was meant).
    static func optional(from map: ConfigMapping, base: String) -> Secret? {
        let owner = map.owner
        let keys = Secret.keys(base)
        let present = keys.filter { map.contains($0) }
        if present.isEmpty { return nil }
        guard present.count == 1, let node = map.entries[present[0]] else {
            let path = owner.path.isEmpty ? base : "\(owner.path).\(base)"
            owner.context.issues.report(
                owner.path, "exactly one of \(keys.joined(separator: ", ")) is required; found \(present.joined(separator: " and "))",
                standIn: path)
            return Secret(source: .inline, value: Secret.unresolvedPlaceholder)
        }
        do {
            return try resolve(node, key: present[0], keys: keys)
        } catch {
            owner.context.issues.reject(error)
            return Secret(source: .inline, value: Secret.unresolvedPlaceholder)
        }
    }

    /// The secret `node` holds under `key` (one of `keys`: `_env`, `_file`, inline).
    /// With ``SecretLoading/skip`` a variable or file is named but not read.
    private static func resolve(_ node: ConfigNode, key: String, keys: [String]) throws(ConfigError) -> Secret {
        guard !node.isNull else { throw node.error("must not be empty") }
        let context = node.context
        if context.secrets == .skip, key != keys[2] {
            let name = try node.nonEmptyString()
            let source: SecretSource = key == keys[0] ? .env(name) : .file(context.resolvePath(name))
            return Secret(source: source, value: Secret.unresolvedPlaceholder)
        }
        switch key {
        case keys[0]:
            let name = try node.nonEmptyString()
            guard let value = context.environment[name] else {
                throw node.error("environment variable \(name) is not set")
            }
            guard !value.isEmpty else { throw node.error("environment variable \(name) is empty") }
            return Secret(source: .env(name), value: value)
        case keys[1]:
            let path = context.resolvePath(try node.nonEmptyString())
            return Secret(source: .file(path), value: try Secret.readFile(path, node: node))
        default:
            let value = try node.string()
            guard !value.isEmpty else { throw node.error("must not be empty") }
            return Secret(source: .inline, value: value)
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
