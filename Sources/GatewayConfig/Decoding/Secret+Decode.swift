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

    /// Resolves the one `base` secret key present in `map` (a mapping at `owner`).
    init(decodingFrom owner: ConfigNode, _ map: ConfigMapping, base: String = "password") throws(ConfigError) {
        guard let secret = try Secret.decodeOptional(from: owner, map, base: base) else {
            throw owner.error("exactly one of \(Secret.keys(base).joined(separator: ", ")) is required; found none")
        }
        self = secret
    }

    /// The `base` secret in `map`, or nil when none of its keys is written;
    /// more than one of them is an error.
    static func decodeOptional(from owner: ConfigNode, _ map: ConfigMapping, base: String) throws(ConfigError) -> Secret? {
        let keys = Secret.keys(base)
        let present = keys.filter { map.contains($0) }
        if present.isEmpty { return nil }
        guard present.count == 1, let node = map.entries[present[0]] else {
            throw owner.error("exactly one of \(keys.joined(separator: ", ")) is required; found \(present.joined(separator: " and "))")
        }
        guard !node.isNull else { throw node.error("must not be empty") }
        if owner.context.secrets == .skip, present[0] != keys[2] {
            let name = try node.nonEmptyString()
            let source: SecretSource = present[0] == keys[0] ? .env(name) : .file(owner.context.resolvePath(name))
            return Secret(source: source, value: Secret.unresolvedPlaceholder)
        }
        switch present[0] {
        case keys[0]:
            let name = try node.nonEmptyString()
            guard let value = owner.context.environment[name] else {
                throw node.error("environment variable \(name) is not set")
            }
            guard !value.isEmpty else { throw node.error("environment variable \(name) is empty") }
            return Secret(source: .env(name), value: value)
        case keys[1]:
            let path = owner.context.resolvePath(try node.nonEmptyString())
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
