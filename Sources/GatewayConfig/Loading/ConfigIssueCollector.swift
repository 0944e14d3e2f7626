/// Gathers every problem of one config file during one load, so that a file
/// with seven mistakes reports seven, not one per run.
///
/// Decoding records a value it cannot read and goes on with a default in its
/// place: that key path then holds a *stand-in*. Validation reports the rules
/// the decoded config breaks; a report at or under a stand-in is dropped (it
/// would be about the default, not about what was written), and so is a
/// second report at a key already reported (one mistake per key: an empty
/// user name is not also a duplicate one).
final class ConfigIssueCollector {
    let file: String
    private(set) var issues: [ConfigError.Issue] = []
    private var standIns: [String] = []
    /// Key paths whose own value has an issue (not those that only locate a missing key).
    private var faultyValues: Set<String> = []

    init(file: String) {
        self.file = file
    }

    /// All issues as one error, or nil when there are none.
    var error: ConfigError? {
        issues.isEmpty ? nil : ConfigError(file: file, issues: issues)
    }

    // MARK: Decoding

    /// A value that could not be decoded (`error` locates it): a default
    /// stands in for it from now on.
    func reject(_ error: ConfigError) {
        for issue in error.issues {
            report(issue.keyPath, issue.message, standIn: issue.keyPath)
            faultyValues.insert(issue.keyPath)
        }
    }

    /// A problem at `keyPath` that leaves its value in use, such as a missing
    /// key (reported at its mapping); `standIn` is the key path, if any, whose
    /// value is now a default in place of what should have been written.
    func report(_ keyPath: String, _ message: String, standIn: String? = nil) {
        if !isStandIn(keyPath) {
            issues.append(ConfigError.Issue(keyPath: keyPath, message: message))
        }
        if let standIn { markStandIn(standIn) }
    }

    /// Marks `keyPath` as a default in place of what was written, without an
    /// issue of its own (one was reported elsewhere, e.g. an element of the list).
    func markStandIn(_ keyPath: String) {
        if !standIns.contains(keyPath) { standIns.append(keyPath) }
    }

    // MARK: Validation

    /// A rule the decoded config breaks at `keyPath`: recorded unless that
    /// value is a stand-in or its key already has an issue.
    func fail(_ keyPath: String, _ message: String) {
        guard !isStandIn(keyPath), faultyValues.insert(keyPath).inserted else { return }
        issues.append(ConfigError.Issue(keyPath: keyPath, message: message))
    }

    /// True when `keyPath` is a stand-in or lies under one.
    private func isStandIn(_ keyPath: String) -> Bool {
        standIns.contains { ConfigIssueCollector.keyPath(keyPath, isAtOrUnder: $0) }
    }

    /// `upstreams[1].auth` is under `upstreams[1]`; `upstreams[10]` is not.
    static func keyPath(_ path: String, isAtOrUnder ancestor: String) -> Bool {
        guard path.hasPrefix(ancestor) else { return false }
        if path.count == ancestor.count { return true }
        guard !ancestor.isEmpty else { return false }
        let next = path[path.index(path.startIndex, offsetBy: ancestor.count)]
        return next == "." || next == "["
    }
}
