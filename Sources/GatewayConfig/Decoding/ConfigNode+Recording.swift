/// Decoding that goes on after a mistake: a value that cannot be read is
/// recorded in the context's ``ConfigIssueCollector`` and its default stays,
/// so one load reports every mistake of the file.
///
/// A section's `init(decoding:)` throws only when the section as a whole is
/// unusable (not a mapping, a required piece missing); it records problems of
/// its keys and goes on. The caller records what it throws with these helpers.
/// Their closures throw untyped (a closure literal infers `any Error`, and
/// `{ try $0.int() }` reads better than an annotated one); what they throw is
/// always a `ConfigError`.
extension ConfigNode {
    /// `decode(self)`, or nil after recording its error (the value keeps its default).
    func decoded<T>(_ decode: (ConfigNode) throws -> T) -> T? {
        do {
            return try decode(self)
        } catch let error as ConfigError {
            context.issues.reject(error)
            return nil
        } catch {
            context.issues.reject(self.error("\(error)"))
            return nil
        }
    }

    /// The list's elements that decode. A wrong element is recorded; the
    /// list's own checks are then skipped, as its indices no longer line up.
    func elements<T>(of what: String, _ decode: (ConfigNode) throws -> T) throws(ConfigError) -> [T] {
        var values: [T] = []
        var complete = true
        for element in try sequence(of: what) {
            if let value = element.decoded(decode) {
                values.append(value)
            } else {
                complete = false
            }
        }
        if !complete { context.issues.markStandIn(path) }
        return values
    }
}

extension ConfigMapping {
    /// Decodes `key` into `value` when it is written (not null); a mistake is
    /// recorded and `value` keeps what it held.
    func decode<T>(_ key: String, into value: inout T, _ decode: (ConfigNode) throws -> T) {
        guard let node = self[key], let decoded = node.decoded(decode) else { return }
        value = decoded
    }

    /// The decoded value of `key`, or nil when it is not written or wrong (recorded).
    func decode<T>(_ key: String, _ decode: (ConfigNode) throws -> T) -> T? {
        self[key]?.decoded(decode)
    }

    /// The decoded value of a key that must be written. When it is missing,
    /// `missing required key '<key>' (<hint>)` is recorded at the mapping;
    /// either way a nil leaves a default standing in for it.
    func required<T>(_ key: String, hint: String? = nil, _ decode: (ConfigNode) throws -> T) -> T? {
        guard let node = self[key] else {
            let path = owner.path.isEmpty ? key : "\(owner.path).\(key)"
            let message = "missing required key '\(key)'" + (hint.map { " (\($0))" } ?? "")
            owner.context.issues.report(owner.path, message, standIn: path)
            return nil
        }
        return node.decoded(decode)
    }
}
