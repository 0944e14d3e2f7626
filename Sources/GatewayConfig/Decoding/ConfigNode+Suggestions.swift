/// "Did you mean" for misspelt keys and values: the closest known name by
/// edit distance, when it is close enough to be the likely intent.
extension ConfigNode {
    /// One of `names`, compared ignoring case unless `ignoringCase` is false;
    /// returns the name as listed. Otherwise an error listing them all, with
    /// the closest as a suggestion: `expected one of: bearer, header, ...;
    /// got 'beaerer' (did you mean "bearer"?)`.
    func oneOf(_ names: [String], ignoringCase: Bool = true) throws(ConfigError) -> String {
        let text = try string()
        let match = ignoringCase ? names.first { $0.lowercased() == text.lowercased() } : names.first { $0 == text }
        guard let match else {
            throw error("expected one of: \(names.joined(separator: ", ")); got '\(text)'" + ConfigNode.suggestion(for: text, among: names))
        }
        return match
    }

    /// One of the raw values of `T` (exact case); the error lists them.
    func choice<T: RawRepresentable & CaseIterable>(_ type: T.Type) throws(ConfigError) -> T where T.RawValue == String {
        let name = try oneOf(T.allCases.map(\.rawValue), ignoringCase: false)
        return T(rawValue: name)!
    }

    static func unknownKeyMessage(_ key: String, expected keys: [String]) -> String {
        "unknown key '\(key)'; expected one of: \(keys.joined(separator: ", "))" + suggestion(for: key, among: keys)
    }

    /// ` (did you mean "name"?)` for the name of `names` closest to `text`,
    /// or "" when none is within a third of its length (at least 1 edit).
    /// Case, `-` and `_` do not count as differences.
    static func suggestion(for text: String, among names: [String]) -> String {
        func folded(_ name: String) -> String { name.lowercased().replacingOccurrences(of: "-", with: "_") }
        let typed = folded(text)
        let scored = names.map { (name: $0, distance: editDistance(typed, folded($0))) }
        guard let best = scored.min(by: { $0.distance < $1.distance }),
            best.distance <= max(1, best.name.count / 3)
        else { return "" }
        return " (did you mean \"\(best.name)\"?)"
    }

    /// Levenshtein distance: insertions, deletions and substitutions of characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            previous = current
        }
        return previous[b.count]
    }
}
