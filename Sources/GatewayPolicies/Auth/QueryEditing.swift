import GatewayCore

/// Adding a parameter to an origin-form target, removing earlier occurrences.
enum QueryEditing {
    /// `/p?a=1&key=x` with `key` and `key=SECRET` → `/p?a=1&key=SECRET`.
    static func replacing(parameter name: String, with pair: String, in target: String) -> String {
        var path = Substring(target)
        var fragment = ""
        if let hash = path.firstIndex(of: "#") {
            fragment = String(path[hash...])
            path = path[..<hash]
        }
        var kept: [Substring] = []
        if let q = path.firstIndex(of: "?") {
            let query = path[path.index(after: q)...]
            path = path[..<q]
            kept = query.split(separator: "&", omittingEmptySubsequences: true).filter { !matches($0, name) }
        }
        kept.append(Substring(pair))
        return String(path) + "?" + kept.joined(separator: "&") + fragment
    }

    static func contains(parameter name: String, in target: String) -> Bool {
        guard let q = target.firstIndex(of: "?") else { return false }
        var query = target[target.index(after: q)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        return query.split(separator: "&").contains { matches($0, name) }
    }

    /// Whether the `name[=value]` item names `name` (compared after decoding).
    private static func matches(_ item: Substring, _ name: String) -> Bool {
        let rawName = item.firstIndex(of: "=").map { item[..<$0] } ?? item
        return PercentEncoding.decode(rawName, plusIsSpace: true) == name
    }
}
