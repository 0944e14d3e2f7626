import Foundation

/// A request target split into path and query parameters.
///
/// Accepts origin-form (`/a?b=c`) and absolute-form (`http://host/a?b=c`) targets; for the
/// latter the path is the part after the authority.
struct RequestTarget: Sendable, Equatable {
    var path: String
    /// Query parameters in order, percent-decoded. Repeated names are kept.
    var query: [(name: String, value: String)]

    init(_ target: String) {
        var rest = Substring(target)
        if let schemeEnd = rest.range(of: "://") {
            let afterScheme = rest[schemeEnd.upperBound...]
            if let slash = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                rest = afterScheme[slash...]
            } else {
                rest = "/"
            }
        }
        if let fragment = rest.firstIndex(of: "#") {
            rest = rest[..<fragment]
        }
        if let questionMark = rest.firstIndex(of: "?") {
            let pathPart = rest[..<questionMark]
            self.path = pathPart.isEmpty ? "/" : String(pathPart)
            self.query = Self.parseQuery(rest[rest.index(after: questionMark)...])
        } else {
            self.path = rest.isEmpty ? "/" : String(rest)
            self.query = []
        }
    }

    static func == (lhs: RequestTarget, rhs: RequestTarget) -> Bool {
        lhs.path == rhs.path && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    private static func parseQuery(_ query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                return (decode(item[..<equals]), decode(item[item.index(after: equals)...]))
            }
            return (decode(item), "")
        }
    }

    private static func decode(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }

    /// The first value of query parameter `name`.
    func value(_ name: String) -> String? {
        self.query.first { $0.name == name }?.value
    }

    /// All values of query parameter `name`, in order.
    func values(_ name: String) -> [String] {
        self.query.filter { $0.name == name }.map(\.value)
    }

    /// An integer query parameter, `defaultValue` if absent or not a number.
    func int(_ name: String, default defaultValue: Int) -> Int {
        self.value(name).flatMap { Int($0) } ?? defaultValue
    }

    /// The path segments after `prefix` (e.g. `/bytes/10` with prefix `/bytes/` gives `10`).
    func remainder(after prefix: String) -> String? {
        guard self.path.hasPrefix(prefix) else { return nil }
        return String(self.path.dropFirst(prefix.count))
    }
}
