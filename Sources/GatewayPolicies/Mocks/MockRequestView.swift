public import GatewayCore
import Foundation
public import NIOCore

/// What mock rules and replayed entries read of a request: method, path,
/// query pairs (percent-decoded), fields and body, made once per request an
/// injection phase looks at.
public struct MockRequestView: Sendable {
    public var method: String
    public var host: String
    public var path: Substring
    /// The raw query, without `?`.
    public var rawQuery: Substring
    public var query: [(name: String, value: String)]
    public var headers: RequestFields
    public var body: String?

    public init(_ request: ProxyRequest, body: ByteBuffer?) {
        method = request.method.rawValue
        host = request.host.lowercased()
        path = request.path
        let target = request.target
        if let mark = target.firstIndex(of: "?") {
            rawQuery = target[target.index(after: mark)...]
            if let hash = rawQuery.firstIndex(of: "#") { rawQuery = rawQuery[..<hash] }
        } else {
            rawQuery = ""
        }
        query = Self.pairs(rawQuery)
        headers = request.headers
        self.body = body.map { String(decoding: $0.readableBytesView, as: UTF8.self) }
    }

    /// `a=1&b=x%20y` as decoded pairs, in order (`+` is a space).
    static func pairs(_ query: Substring) -> [(name: String, value: String)] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in
                String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// The query's pairs sorted, so `b=2&a=1` matches `a=1&b=2`.
    var normalizedQuery: String {
        query.sorted { ($0.name, $0.value) < ($1.name, $1.value) }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }
}
