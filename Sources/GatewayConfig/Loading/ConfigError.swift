/// A configuration problem, located as precisely as possible.
///
/// `keyPath` names the offending key the way it is written in YAML, with list
/// indices in brackets (`upstreams[0].tls.pins[1]`); it is empty for problems
/// with the file as a whole (missing file, YAML syntax). Messages never contain
/// secret values, only the names of the variables or files they come from.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The config file (or the label passed to `ConfigLoader.parse`).
    public var file: String
    /// Where in the file: `listen.proxy`, `upstreams[2].hosts[0]`; "" for the whole file.
    public var keyPath: String
    /// What is wrong, and where it helps, what was expected.
    public var message: String

    public init(file: String, keyPath: String, message: String) {
        self.file = file
        self.keyPath = keyPath
        self.message = message
    }

    /// `<file>: <keyPath>: <message>`, or `<file>: <message>` when `keyPath` is empty.
    public var description: String {
        keyPath.isEmpty ? "\(file): \(message)" : "\(file): \(keyPath): \(message)"
    }
}
