import Foundation
import GatewayCore
import NIOHTTP1

/// Builds HAR 1.2 from trace records, off the hot path (`gateway trace har`,
/// the admin page's `/traces.har`). Everything comes from the records as the
/// trace wrote them, so the redaction is the trace's (``TraceRedactor``): the
/// request from the through-gateway curl line (secrets as `${NAME}`
/// placeholders), the response head from `responseHeaders`, the request body
/// inline from the line or from its body file (written redacted).
public struct HARExport: Sendable {
    public static let gatewayCreator = HARLog.Creator(name: "gateway", version: GatewayVersion.current)
    public var creator = HARExport.gatewayCreator
    /// The bytes of a body file a curl line names; nil when it is gone.
    let bodyFile: @Sendable (String) -> [UInt8]?

    public init(bodyFile: @escaping @Sendable (String) -> [UInt8]?) {
        self.bodyFile = bodyFile
    }

    /// Reads body files from disk (the CLI).
    public static let fromFiles = HARExport { path in FileManager.default.contents(atPath: path).map(Array.init) }

    public func log(_ records: [TraceRecord]) -> HARLog {
        HARLog(log: HARLog.Log(creator: creator, entries: records.map(entry)))
    }

    /// The document as pretty-printed JSON (slashes unescaped, keys sorted),
    /// safe to show on a terminal: the encoder writes C0 controls inside
    /// strings as `\u` escapes, and DEL, C1 and bidi formatting characters
    /// (``TerminalSafety``) are written as `\u` escapes too, so a request's
    /// bytes never act on the terminal that shows the file (`cat run.har`),
    /// and the JSON reads back as the same strings.
    public func json(_ records: [TraceRecord]) throws -> [UInt8] {
        try Self.json(log(records))
    }

    /// ``json(_:)`` of a whole document (a recording's, ``HARRecorder``).
    public static func json(_ log: HARLog) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let text = String(decoding: try encoder.encode(log), as: UTF8.self)
        return Array(TerminalSafety.escaped(text, style: .json).utf8) + [UInt8(ascii: "\n")]
    }

    public func entry(_ record: TraceRecord) -> HARLog.Entry {
        let timings = HARTimings(record: record)
        return HARLog.Entry(
            startedDateTime: record.time,
            time: timings.total,
            request: request(record),
            response: response(record),
            timings: timings,
            _id: record.id,
            _upstream: record.upstream,
            _attempts: record.attempts.map { a in
                HARLog.Attempt(
                    status: a.status, error: a.error, reusedConnection: a.reusedConnection,
                    connect: a.connect.map(HARTimings.milliseconds), ssl: a.tls.map(HARTimings.milliseconds),
                    ttfb: a.ttfb.map(HARTimings.milliseconds), total: a.total.map(HARTimings.milliseconds)
                )
            },
            _gatewayError: record.error,
            _traceId: record.traceId,
            _injected: record.injected
        )
    }

    func request(_ record: TraceRecord) -> HARLog.Request {
        let parsed = CurlLineRequest(line: record.curl)
        let url = parsed?.url ?? "http://\(record.endpoint)"
        let headers = (parsed?.headers ?? []).map { HARLog.NameValue(name: $0.name, value: $0.value) }
        return HARLog.Request(
            method: record.method,
            url: url,
            httpVersion: Self.httpVersion(of: record),
            headers: headers,
            queryString: Self.query(of: url),
            postData: parsed.flatMap { postData($0.body, contentType: Self.value(of: "content-type", in: headers)) },
            bodySize: record.requestBytes ?? -1
        )
    }

    func postData(_ body: CurlLineRequest.Body, contentType: String?) -> HARLog.PostData? {
        let mimeType = contentType ?? "application/octet-stream"
        switch body {
        case .none:
            return nil
        case .inline(let text):
            return HARLog.PostData(mimeType: mimeType, text: text)
        case .file(let path):
            guard let bytes = bodyFile(path) else {
                return HARLog.PostData(mimeType: mimeType, text: "", comment: "the body file is gone (deleted with its rotated trace file)")
            }
            if let text = String(validating: bytes, as: UTF8.self), ShellQuoting.isInlineSafe(bytes) {
                return HARLog.PostData(mimeType: mimeType, text: text)
            }
            return HARLog.PostData(mimeType: mimeType, text: Data(bytes).base64EncodedString(), encoding: "base64")
        case .notCaptured(let length):
            return HARLog.PostData(mimeType: mimeType, text: "", comment: "not captured: streamed, \(length.map { "\($0) bytes" } ?? "length unknown")")
        }
    }

    func response(_ record: TraceRecord) -> HARLog.Response {
        let headers = (record.responseHeaders ?? []).map { HARLog.NameValue(name: $0.name, value: $0.value) }
        return HARLog.Response(
            status: record.status ?? 0,
            statusText: record.status.map { HTTPResponseStatus(statusCode: $0).reasonPhrase } ?? "",
            httpVersion: Self.httpVersion(of: record),
            headers: headers,
            content: HARLog.Content(size: record.responseBytes, mimeType: Self.value(of: "content-type", in: headers) ?? ""),
            redirectURL: Self.value(of: "location", in: headers) ?? "",
            bodySize: record.responseBytes
        )
    }

    /// The protocol the client spoke, as HAR viewers name it (`HTTP/2.0`, `HTTP/1.1`).
    static func httpVersion(of record: TraceRecord) -> String {
        record.httpVersion == "HTTP/2" ? "HTTP/2.0" : "HTTP/1.1"
    }

    /// The query's pairs in order, percent-decoded (`+` kept: only forms mean a space by it).
    static func query(of url: String) -> [HARLog.NameValue] {
        guard let mark = url.firstIndex(of: "?") else { return [] }
        let query = url[url.index(after: mark)...].prefix { $0 != "#" }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let decode = { (text: String) in text.removingPercentEncoding ?? text }
            return HARLog.NameValue(name: decode(parts[0]), value: parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    static func value(of name: String, in headers: [HARLog.NameValue]) -> String? {
        headers.first { $0.name.lowercased() == name }?.value
    }
}
