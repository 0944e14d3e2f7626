public import Foundation
import Yams

/// Reads, decodes and validates a gateway config file.
///
/// Every problem becomes an issue of one `ConfigError` naming the file and the
/// exact key path, all of them found in one load; unknown keys are errors,
/// never ignored. Relative `ca_file` and
/// `password_file` paths are resolved against the config file's directory.
/// The standard `OTEL_*` variables of `environment` apply over `tracing`
/// (``TracingConfig/applyEnvironment(_:file:)``).
public enum ConfigLoader {
    /// Loads the file at `path`. A missing or unreadable file is a `ConfigError` naming it.
    public static func load(
        path: String,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        secrets: SecretLoading = .resolve
    ) throws(ConfigError) -> GatewayConfig {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigError(file: path, keyPath: "", message: "config file does not exist")
        }
        guard !isDirectory.boolValue else {
            throw ConfigError(file: path, keyPath: "", message: "is a directory, expected a YAML config file")
        }
        guard fileManager.isReadableFile(atPath: path), let data = fileManager.contents(atPath: path) else {
            throw ConfigError(file: path, keyPath: "", message: "config file is not readable")
        }
        guard let yaml = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, keyPath: "", message: "config file is not UTF-8 text")
        }
        return try parse(yaml: yaml, file: path, environment: environment, secrets: secrets)
    }

    /// Parses YAML text; `file` labels errors and anchors relative paths
    /// (its directory, or the working directory when it has none). Decoding
    /// and validation go on past a mistake: the error lists every one found.
    public static func parse(yaml: String, file: String, environment: [String: String], secrets: SecretLoading = .resolve) throws(ConfigError) -> GatewayConfig {
        let baseDirectory = URL(fileURLWithPath: file).deletingLastPathComponent()
        let issues = ConfigIssueCollector(file: file)
        let context = DecodeContext(file: file, environment: environment, baseDirectory: baseDirectory, secrets: secrets, issues: issues)
        let root: Node?
        do {
            // The basic resolver: the decoders read every scalar's text themselves
            // (`ConfigNode.int()`, `bool()`, ...), so Yams's tag rules are never
            // consulted, and the default resolver's regular expressions (ICU)
            // would only cost start-up time and resident memory.
            root = try Yams.compose(yaml: yaml, .basic)
        } catch {
            throw ConfigError(file: file, keyPath: "", message: syntaxMessage(error, yaml: yaml))
        }
        var config = GatewayConfig()
        if let root {
            let node = ConfigNode(node: root, path: "", context: context)
            if !node.isNull {
                guard case .mapping = root else {
                    throw ConfigError(file: file, keyPath: "", message: "expected a mapping of settings at the top level, got \(node.kindName)")
                }
                config = node.decoded { try GatewayConfig(decoding: $0) } ?? config
            }
        }
        // The OpenTelemetry variables apply over the file (and to a file without `tracing`).
        do {
            try config.tracing.applyEnvironment(environment, file: file, readKey: secrets == .resolve)
        } catch {
            issues.reject(error)
        }
        config.validate(into: issues)
        if let error = issues.error { throw error }
        return config
    }

    /// A YAML syntax error as `line L, column C: problem`, without the
    /// source snippet Yams adds (the line could hold an inline password).
    static func syntaxMessage(_ error: any Error, yaml: String) -> String {
        guard let yamlError = error as? YamlError else { return "invalid YAML" }
        func located(_ mark: Mark, _ problem: String, _ context: YamlError.Context?) -> String {
            var text = "invalid YAML at line \(mark.line), column \(mark.column): \(problem)"
            if let context { text += " (\(context.text) at line \(context.mark.line), column \(context.mark.column))" }
            return text + hint(forLine: mark.line, of: yaml)
        }
        switch yamlError {
        case .scanner(let context, let problem, let mark, _),
            .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            return located(mark, problem, context)
        case .reader(let problem, let offset, _, _):
            return "invalid YAML: \(problem)" + (offset.map { " at byte offset \($0)" } ?? "")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            return "invalid YAML at line \(context.mark.line), column \(context.mark.column): duplicate key \(keys) in one mapping"
        case .dataCouldNotBeDecoded:
            return "invalid YAML: not valid text"
        default:
            return "invalid YAML"
        }
    }

    /// Explains the usual cause of a syntax error on `line` (1-based), without
    /// quoting the line itself: an unquoted `[::1]:8080` reads as a YAML list.
    static func hint(forLine line: Int, of yaml: String) -> String {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return "" }
        let text = lines[line - 1]
        guard let open = text.range(of: ": ["), let close = text[open.upperBound...].firstIndex(of: "]") else { return "" }
        let inside = text[open.upperBound..<close]
        let looksLikeIPv6 = inside.contains(":") && inside.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        return looksLikeIPv6 ? "; an IPv6 address must be quoted, e.g. \"[::1]:8080\"" : ""
    }
}
