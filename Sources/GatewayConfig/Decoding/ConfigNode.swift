import Foundation
import Yams

/// What every node of one decode shares: the file label (for errors), the
/// environment (for secrets), the directory relative paths resolve against,
/// and where the problems found go (decoding goes on after one).
struct DecodeContext {
    var file: String
    var environment: [String: String]
    var baseDirectory: URL
    var secrets: SecretLoading = .resolve
    var issues: ConfigIssueCollector

    func error(_ keyPath: String, _ message: String) -> ConfigError {
        ConfigError(file: file, keyPath: keyPath, message: message)
    }

    /// `path` made absolute against the config file's directory.
    func resolvePath(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return baseDirectory.appendingPathComponent(path).standardizedFileURL.path
    }
}

/// A YAML node together with its key path (`upstreams[0].tls.pins[1]`), so
/// that every error names exactly where it is.
struct ConfigNode {
    let node: Node
    let path: String
    let context: DecodeContext

    func error(_ message: String) -> ConfigError { context.error(path, message) }

    func child(_ key: String, _ node: Node) -> ConfigNode {
        ConfigNode(node: node, path: path.isEmpty ? key : "\(path).\(key)", context: context)
    }

    func element(_ index: Int, _ node: Node) -> ConfigNode {
        ConfigNode(node: node, path: "\(path)[\(index)]", context: context)
    }

    /// `null`, `~` or an empty value: treated as if the key were absent.
    var isNull: Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain || scalar.style == .any else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(scalar.string)
    }

    var kindName: String {
        switch node {
        case .scalar: isNull ? "null" : "a scalar"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .alias: "an alias"
        }
    }

    // MARK: Containers

    /// The mapping's entries whose keys are among `keys`. An unknown, empty
    /// or non-string key is recorded (with a suggestion when it is close to a
    /// known one) and left out; only a node that is no mapping at all throws.
    func mapping(keys: [String]) throws(ConfigError) -> ConfigMapping {
        guard case .mapping(let mapping) = node else {
            throw error("expected a mapping with keys \(keys.joined(separator: ", ")), got \(kindName)")
        }
        var entries: [String: ConfigNode] = [:]
        for (keyNode, valueNode) in mapping {
            // No key path can name a key that is a list, a mapping (`? [a]: 1`) or empty
            // (`? : 1`), and at the top level there is no parent to name: the position locates it.
            let position = keyNode.mark.map { " (line \($0.line), column \($0.column))" } ?? ""
            guard case .scalar(let keyScalar) = keyNode else {
                context.issues.report(path, "keys must be plain strings, got \(ConfigNode(node: keyNode, path: path, context: context).kindName)\(position)")
                continue
            }
            let key = keyScalar.string
            guard !key.isEmpty else {
                context.issues.report(path, "keys must not be empty\(position)")
                continue
            }
            guard keys.contains(key) else {
                context.issues.reject(child(key, valueNode).error(ConfigNode.unknownKeyMessage(key, expected: keys)))
                continue
            }
            entries[key] = child(key, valueNode)
        }
        return ConfigMapping(owner: self, entries: entries)
    }

    /// The list's elements; a single scalar is not promoted to a list.
    func sequence(of what: String) throws(ConfigError) -> [ConfigNode] {
        guard case .sequence(let sequence) = node else {
            throw error("expected a list of \(what), got \(kindName)")
        }
        return sequence.enumerated().map { element($0.offset, $0.element) }
    }

    // MARK: Scalars

    func string() throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error("expected a string, got \(kindName)") }
        return scalar.string
    }

    func nonEmptyString() throws(ConfigError) -> String {
        let text = try string()
        guard !text.isEmpty else { throw error("must not be empty") }
        return text
    }

    func bool() throws(ConfigError) -> Bool {
        let text = try scalarText(expecting: "true or false")
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw error("expected true or false, got '\(text)'")
        }
    }

    func int() throws(ConfigError) -> Int {
        let text = try scalarText(expecting: "an integer")
        guard let value = Int(text) else { throw error("expected an integer, got '\(text)'") }
        return value
    }

    /// A decimal number: `20`, `2.5`, `-1` (ranges are checked by validation).
    /// No exponent, hex, `.inf` or `.nan`.
    func number() throws(ConfigError) -> Double {
        let text = try scalarText(expecting: "a number like 20 or 2.5")
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        let parts = digits.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.count <= 15 && $0.allSatisfy(\.isASCIIDigit) }),
            let value = Double(text)
        else { throw error("expected a number like 20 or 2.5, got '\(text)'") }
        return value
    }

    func duration() throws(ConfigError) -> Duration {
        let text = try scalarText(expecting: "a duration like 10s or 250ms")
        guard let value = ConfigUnits.parseDuration(text) else {
            throw error("expected a duration like 10s or 250ms, got '\(text)'")
        }
        return value
    }

    func size() throws(ConfigError) -> Int {
        let text = try scalarText(expecting: "a size like 32KiB or 1MiB")
        guard let value = ConfigUnits.parseSize(text) else {
            throw error("expected a size like 32KiB or 1MiB, got '\(text)'")
        }
        return value
    }

    private func scalarText(expecting what: String) throws(ConfigError) -> String {
        guard case .scalar(let scalar) = node else { throw error("expected \(what), got \(kindName)") }
        return scalar.string.trimmingCharacters(in: .whitespaces)
    }
}

/// The checked entries of one mapping; absent and null keys read as nil.
struct ConfigMapping {
    /// The mapping itself.
    let owner: ConfigNode
    let entries: [String: ConfigNode]

    subscript(key: String) -> ConfigNode? {
        guard let node = entries[key], !node.isNull else { return nil }
        return node
    }

    /// True when the key is written, even with a null value.
    func contains(_ key: String) -> Bool { entries[key] != nil }
}
