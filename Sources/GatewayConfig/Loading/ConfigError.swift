/// The problems of one config file: every mistake found in one pass, each
/// located as precisely as possible.
///
/// An issue's `keyPath` names the offending key the way it is written in YAML,
/// with list indices in brackets (`upstreams[0].tls.pins[1]`); it is empty for
/// problems with the file as a whole (missing file, YAML syntax). Messages
/// never contain secret values, only the names of the variables or files they
/// come from.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One mistake: where it is and what is wrong.
    public struct Issue: Sendable, Equatable, CustomStringConvertible {
        /// Where in the file: `listen.proxy`, `upstreams[2].hosts[0]`; "" for the whole file.
        public var keyPath: String
        /// What is wrong, and where it helps, what was expected.
        public var message: String

        public init(keyPath: String, message: String) {
            self.keyPath = keyPath
            self.message = message
        }

        /// `<keyPath>: <message>`, or `<message>` when `keyPath` is empty.
        public var description: String { keyPath.isEmpty ? message : "\(keyPath): \(message)" }
    }

    /// The config file (or the label passed to `ConfigLoader.parse`).
    public var file: String
    /// Every problem found, in the order found (decoding, then validation); never empty.
    public var issues: [Issue]

    /// One problem.
    public init(file: String, keyPath: String, message: String) {
        self.init(file: file, issues: [Issue(keyPath: keyPath, message: message)])
    }

    /// Several problems of one file; `issues` must not be empty.
    public init(file: String, issues: [Issue]) {
        precondition(!issues.isEmpty, "a ConfigError lists at least one issue")
        self.file = file
        self.issues = issues
    }

    /// The first issue's key path.
    public var keyPath: String { issues[0].keyPath }
    /// The first issue's message.
    public var message: String { issues[0].message }

    /// Each issue as `<file>: <keyPath>: <message>` (`<file>: <message>` for
    /// the whole file), one per line.
    public var lines: [String] { issues.map { "\(file): \($0)" } }

    /// ``lines`` joined by newlines.
    public var description: String { lines.joined(separator: "\n") }
}
