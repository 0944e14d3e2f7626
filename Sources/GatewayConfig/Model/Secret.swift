/// Where a secret's value came from. Only the *name* of the source is ever
/// shown (in logs, errors, `redactedYAML()`), never the value.
public enum SecretSource: Sendable, Equatable {
    /// An environment variable, by name (`GATEWAY_PROXY_PASSWORD`).
    case env(String)
    /// A file, by path (already resolved against the config file's directory).
    case file(String)
    /// Written directly in the config file.
    case inline
}

/// A secret value (a password, a token) resolved at load time.
///
/// `description`, `debugDescription` and the reflection mirror (used by
/// `dump`, and by `print` of a struct holding a `Secret`) all hide the value:
/// they show `<redacted from $NAME>` and the like. Read `value` only where the
/// secret is actually used.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let source: SecretSource
    public let value: String

    public init(source: SecretSource, value: String) {
        self.source = source
        self.value = value
    }

    /// `<redacted from $NAME>`, `<redacted from file PATH>` or `<redacted>`.
    public var description: String {
        switch source {
        case .env(let name): "<redacted from $\(name)>"
        case .file(let path): "<redacted from file \(path)>"
        case .inline: "<redacted>"
        }
    }

    public var debugDescription: String { "Secret(\(description))" }
}

extension Secret: CustomReflectable {
    /// Keeps the value out of `dump(_:)` and of default struct printing.
    public var customMirror: Mirror {
        Mirror(self, children: ["source": source, "value": "<redacted>"], displayStyle: .struct)
    }
}
