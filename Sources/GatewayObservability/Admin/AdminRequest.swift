import Foundation
import NIOHTTP1

/// One request to the admin listener as its routes see it: the method, the
/// path, the query, and whether it says it comes from a script rather than a
/// web page (``AdminRequest/actionField`` present, no `Origin`).
public struct AdminRequest: Sendable, Equatable {
    /// The field a script sends to change something (`POST /injection/...`):
    /// a page on another site cannot send it without a CORS preflight, which
    /// the admin listener refuses (405), so a form or `fetch` from a browser
    /// tab never switches faults behind the user's back.
    public static let actionField = "X-Gateway-Admin-Action"

    public var method: String
    public var path: String
    /// The text after `?`, empty when none.
    public var query: String
    /// ``actionField`` was sent and `Origin` was not.
    public var isScripted: Bool

    public init(method: String, path: String, query: String = "", isScripted: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.isScripted = isScripted
    }

    init(_ head: HTTPRequestHead) {
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.init(
            method: head.method.rawValue,
            path: String(parts.first.flatMap { $0.isEmpty ? nil : $0 } ?? "/"),
            query: parts.count > 1 ? String(parts[1]) : "",
            isScripted: head.headers.contains(name: Self.actionField) && !head.headers.contains(name: "Origin")
        )
    }

    /// The value of query parameter `name` (percent-decoded), if present.
    public func queryValue(_ name: String) -> String? {
        for pair in query.split(separator: "&") {
            let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard halves.first == Substring(name) else { continue }
            let raw = halves.count > 1 ? String(halves[1]) : ""
            return raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
        }
        return nil
    }
}
