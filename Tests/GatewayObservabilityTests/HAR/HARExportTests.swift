import GatewayTesting
import Foundation
import GatewayConfig
import GatewayCore
import GatewayObservability
import NIOHTTP1
import Testing

/// HAR entries from trace records: the request read back from the redacted
/// curl line, the recorded response head, body inline / from its file
/// (base64 when binary), the gateway's fields as `_` custom fields.
@Suite("HAR export", .timeLimit(.minutes(1)))
struct HARExportTests {
    static let forms = TraceCurlForms(config: GatewayConfig(), proxyURL: "http://127.0.0.1:8080")

    static func record(_ request: ProxyRequest, body: CurlCommand.Body, bodyLength: Int?) -> TraceRecord {
        TraceRecord(
            id: "r1", time: "2026-11-21T23:59:35.123Z", client: "127.0.0.1:5000", upstream: "api", method: request.method.rawValue,
            endpoint: "api.test/x", attempts: [
                .init(status: 503, error: nil, reusedConnection: false, connect: 0.001, tls: nil, ttfb: 0.004, total: 0.005, start: 0, connectStart: 0, sent: 0.002),
                .init(status: 302, error: nil, reusedConnection: true, connect: nil, tls: nil, ttfb: 0.003, total: 0.004, start: 0.020, connectStart: nil, sent: 0.001),
            ],
            status: 302, error: nil, requestBytes: bodyLength, responseBytes: 12, duration: 0.025,
            curl: forms.throughGateway(request, body: body, bodyLength: bodyLength).line, curlDirect: "",
            responseHeaders: [.init(name: "Location", value: "/next"), .init(name: "Content-Type", value: "text/plain"), .init(name: "Set-Cookie", value: "${REDACTED_SET_COOKIE}")]
        )
    }

    static func request(_ method: HTTPMethod, _ headers: HTTPHeaders) -> ProxyRequest {
        ProxyRequest(method: method, scheme: .http, host: "api.test", port: 80, target: "/x?token=abc&q=a%20b&flag", headers: RequestFields.lines(headers), body: .empty)
    }

    @Test func entryCarriesRequestResponseTimingsAndGatewayFields() throws {
        let request = Self.request(.POST, ["Host": "api.test", "Authorization": "Bearer client-s3cret", "Content-Type": "application/json"])
        let record = Self.record(request, body: .inline(#"{"a":1}"#), bodyLength: 7)
        let entry = HARExport { _ in nil }.entry(record)
        #expect(entry.startedDateTime == "2026-11-21T23:59:35.123Z")
        #expect(entry.request.method == "POST")
        #expect(entry.request.url == "http://api.test/x?token=${REDACTED_TOKEN}&q=a%20b&flag")
        #expect(entry.request.queryString == [.init(name: "token", value: "${REDACTED_TOKEN}"), .init(name: "q", value: "a b"), .init(name: "flag", value: "")])
        #expect(entry.request.headers.contains(.init(name: "Authorization", value: "${REDACTED_AUTHORIZATION}")))
        #expect(entry.request.postData == HARLog.PostData(mimeType: "application/json", text: #"{"a":1}"#))
        #expect(entry.request.bodySize == 7)
        #expect(entry.response.status == 302 && entry.response.statusText == "Found")
        #expect(entry.response.redirectURL == "/next" && entry.response.content.mimeType == "text/plain" && entry.response.bodySize == 12)
        #expect(entry._upstream == "api" && entry._id == "r1" && entry._gatewayError == nil)
        #expect(entry._attempts.map(\.status) == [503, 302])
        #expect(entry._attempts[0].connect == 1)
        #expect(entry.timings == HARTimings(blocked: 20, dns: -1, connect: -1, ssl: -1, send: 1, wait: 2, receive: 2))
        #expect(entry.time == 25)

        let json = try HARExport { _ in nil }.json([record])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let log = try #require(object["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        let first = try #require((log["entries"] as? [[String: Any]])?.first)
        #expect((first["_attempts"] as? [Any])?.count == 2)
        #expect(first["cache"] is [String: Any])
        #expect(first["_traceId"] as? String == nil, "no trace id without tracing")
        #expect(!String(decoding: json, as: UTF8.self).contains("client-s3cret"))
    }

    @Test func aTracedExchangeCarriesItsTraceID() {
        var record = Self.record(Self.request(.GET, ["Host": "api.test"]), body: .none, bodyLength: 0)
        record.traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
        #expect(HARExport { _ in nil }.entry(record)._traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
    }

    @Test func binaryBodyFromItsFileIsBase64() throws {
        let bytes: [UInt8] = [0, 1, 2, 0xFF, 0x7F]
        let record = Self.record(Self.request(.PUT, ["Content-Type": "application/octet-stream"]), body: .file("/bodies/r1.bin"), bodyLength: bytes.count)
        let entry = HARExport { $0 == "/bodies/r1.bin" ? bytes : nil }.entry(record)
        #expect(entry.request.postData == HARLog.PostData(mimeType: "application/octet-stream", text: Data(bytes).base64EncodedString(), encoding: "base64"))
        #expect(entry.request.method == "PUT")

        let gone = HARExport { _ in nil }.entry(record)
        #expect(gone.request.postData?.text == "" && gone.request.postData?.comment?.contains("gone") == true)
    }

    @Test func failedExchangeHasStatusZeroAndItsError() {
        var record = Self.record(Self.request(.GET, [:]), body: .none, bodyLength: 0)
        record.status = nil
        record.error = "upstream_timeout"
        record.responseHeaders = nil
        let entry = HARExport { _ in nil }.entry(record)
        #expect(entry.response.status == 0 && entry.response.statusText == "" && entry.response.headers.isEmpty)
        #expect(entry._gatewayError == "upstream_timeout")
        #expect(entry.request.postData == nil)
    }
}
