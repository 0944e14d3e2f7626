public import GatewayConfig
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Responses recorded in a HAR 1.2 file (the gateway's export, or a browser's:
/// DevTools, Charles and Proxyman write the same shape), served to the
/// requests that match an entry, as mitmproxy's server replay does: the host
/// and the parts `match` names must be equal; repeated requests get the
/// matching entries in the file's order, and the last one again once all
/// were served. With `timing: recorded` each answer waits the entry's `time`.
public final class HARReplayTable: Sendable {
    public let match: Set<ReplayMatch>
    public let entryCount: Int
    private let entries: [String: [InjectedResponse]]
    private let served: Mutex<[String: Int]>

    public init(config: ReplayConfig) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: config.har))
        let har = try JSONDecoder().decode(HARFile.self, from: data)
        match = config.match
        var table: [String: [InjectedResponse]] = [:]
        for entry in har.log.entries {
            guard let url = URLComponents(string: entry.request.url), let host = url.host else { continue }
            let view = (
                method: entry.request.method.uppercased(), host: host.lowercased(), path: url.percentEncodedPath.isEmpty ? "/" : url.percentEncodedPath,
                query: MockRequestView.pairs(Substring(url.percentEncodedQuery ?? "")), body: entry.request.postData?.text
            )
            let key = Self.key(match: config.match, method: view.method, host: view.host, path: view.path, query: view.query, body: view.body)
            table[key, default: []].append(Self.response(entry, timing: config.recordedTiming))
        }
        entries = table
        entryCount = har.log.entries.count
        served = Mutex([:])
    }

    /// The next recorded answer for `request`, or nil when no entry matches.
    public func answer(_ request: MockRequestView) -> InjectedResponse? {
        let key = Self.key(match: match, method: request.method, host: request.host, path: String(request.path), query: request.query, body: request.body)
        guard let responses = entries[key] else { return nil }
        let index = served.withLock { counts in
            let next = counts[key, default: 0]
            counts[key] = next + 1
            return min(next, responses.count - 1)
        }
        return responses[index]
    }

    public var matchesBody: Bool { match.contains(.body) }

    static func key(match: Set<ReplayMatch>, method: String, host: String, path: String, query: [(name: String, value: String)], body: String?) -> String {
        var key = host
        if match.contains(.method) { key += " " + method }
        if match.contains(.path) { key += " " + path }
        if match.contains(.query) {
            key += "?" + query.sorted { ($0.name, $0.value) < ($1.name, $1.value) }.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        }
        if match.contains(.body) { key += "\n" + (body ?? "") }
        return key
    }

    /// Fields that describe the recorded hop, not the response: dropped (a
    /// browser's HAR holds the decoded body under `Content-Encoding: gzip`).
    static let droppedFields: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade", "trailer", "te", "via",
    ]

    static func response(_ entry: HARFile.Entry, timing: Bool) -> InjectedResponse {
        var headers = HTTPHeaders()
        // A recording that kept a compressed body as sent keeps its Content-Encoding too.
        let kept: Set<String> = entry.response.content._contentEncoded == true ? ["content-encoding"] : []
        for field in entry.response.headers where !field.name.hasPrefix(":") && (!droppedFields.contains(field.name.lowercased()) || kept.contains(field.name.lowercased())) {
            headers.add(name: field.name, value: field.value)
        }
        var body = ByteBuffer()
        if let text = entry.response.content.text {
            if entry.response.content.encoding == "base64", let bytes = Data(base64Encoded: text) {
                body.writeBytes(bytes)
            } else {
                body.writeString(text)
            }
        }
        let delay = timing ? entry.time.map { Duration.milliseconds(Int64(max(0, $0))) } : nil
        return InjectedResponse(status: entry.response.status, headers: headers, body: body, mark: .replay, delay: delay)
    }
}

/// The part of HAR 1.2 replay reads (http://www.softwareishard.com/blog/har-12-spec/).
struct HARFile: Decodable {
    struct Log: Decodable { var entries: [Entry] }
    struct Entry: Decodable {
        var time: Double?
        var request: Request
        var response: Response
    }
    struct Request: Decodable {
        var method: String
        var url: String
        var postData: PostData?
    }
    struct PostData: Decodable { var text: String? }
    struct Response: Decodable {
        var status: Int
        var headers: [Field]
        var content: Content
    }
    struct Field: Decodable {
        var name: String
        var value: String
    }
    struct Content: Decodable {
        var text: String?
        var encoding: String?
        /// The gateway's recording: the text is the body under its `Content-Encoding`.
        var _contentEncoded: Bool?
    }
    var log: Log
}
