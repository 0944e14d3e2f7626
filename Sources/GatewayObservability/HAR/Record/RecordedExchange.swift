import Foundation
import GatewayCore
import NIOCore
import NIOHTTP1

/// One attempt as ``RecordingAttempt`` copied it on the event loop: the
/// request as sent upstream and the response as it came, bodies included.
/// Turned into a HAR entry, redacted, on the recorder's queue (``entry(redactor:)``).
struct RecordedExchange: Sendable {
    /// A body copied up to ``RecordingTransport/bodyLimit``.
    struct Body: Sendable {
        var bytes: [UInt8] = []
        var total = 0

        var isCut: Bool { total > bytes.count }

        mutating func keep(_ buffer: ByteBuffer) {
            total += buffer.readableBytes
            let room = RecordingTransport.bodyLimit - bytes.count
            guard room > 0 else { return }
            bytes += buffer.readableBytesView.prefix(room)
        }
    }

    let started = Date()
    let startedAt = ContinuousClock.now
    var duration: Duration = .zero
    let method: String
    let url: String
    let target: String
    let requestHeaders: HTTPHeaders
    let httpVersion: String
    var requestBody = Body()
    var status = 0
    var responseHeaders = HTTPHeaders()
    var responseBody = Body()

    init(request: ProxyRequest) {
        method = request.method.rawValue
        url = "\(request.scheme.rawValue)://\(request.authority)"
        target = request.target
        requestHeaders = HTTPHeaders(request.headers.map { ($0.name, $0.value) })
        httpVersion = request.version.major == 2 ? "HTTP/2.0" : "HTTP/1.1"
    }
}

extension RecordedExchange {
    /// The HAR entry, redacted as a trace is: secret header values as
    /// `${REDACTED_<NAME>}`, secret query values too, secret JSON and form
    /// fields of both bodies as `[REDACTED]`, every secret value the gateway
    /// holds scrubbed; a body the redactor cannot read is left out.
    func entry(redactor: TraceRedactor, id: String) -> HARLog.Entry {
        let requestFields = Self.fields(redactor.headers(requestHeaders))
        let responseFields = Self.fields(redactor.headers(responseHeaders))
        let url = ShellQuoting.template(redactor.url(prefix: self.url, target: target))
        let milliseconds = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        let requestType = requestHeaders.first(name: "Content-Type")
        let postData = requestBody.total == 0 ? nil : Self.content(requestBody, type: requestType, redactor: redactor, encoded: false).map {
            HARLog.PostData(mimeType: requestType ?? "application/octet-stream", text: $0.text ?? "", encoding: $0.encoding, comment: $0.comment)
        }
        let responseType = responseHeaders.first(name: "Content-Type")
        let encoded = responseHeaders.first(name: "Content-Encoding").map { $0.lowercased() != "identity" } ?? false
        var content = Self.content(responseBody, type: responseType, redactor: redactor, encoded: encoded)
            ?? HARLog.Content(size: responseBody.total, mimeType: responseType ?? "")
        content.mimeType = responseType ?? ""
        return HARLog.Entry(
            startedDateTime: TraceRecord.timestamp(started),
            time: milliseconds,
            request: HARLog.Request(
                method: method, url: url, httpVersion: httpVersion, headers: requestFields,
                queryString: HARExport.query(of: url), postData: postData, bodySize: requestBody.total
            ),
            response: HARLog.Response(
                status: status, statusText: HTTPResponseStatus(statusCode: status).reasonPhrase, httpVersion: httpVersion,
                headers: responseFields, content: content, redirectURL: responseHeaders.first(name: "Location") ?? "", bodySize: responseBody.total
            ),
            // The attempt's phases are the trace's to tell; here all of it is the wait.
            timings: HARTimings(blocked: 0, dns: -1, connect: -1, ssl: -1, send: 0, wait: milliseconds, receive: 0),
            _id: id, _upstream: nil, _attempts: [], _gatewayError: nil
        )
    }

    /// A body as HAR content: redacted text, or base64 for bytes that are
    /// not text (or `encoded`: compressed as sent).
    static func content(_ body: Body, type: String?, redactor: TraceRedactor, encoded: Bool) -> HARLog.Content? {
        var content = HARLog.Content(size: body.total, mimeType: type ?? "")
        if body.isCut { content.comment = "cut at \(body.bytes.count) of \(body.total) bytes" }
        if encoded {
            // Compressed bytes cannot be redacted field by field: scrubbed of known secrets only.
            content.text = Data(redactor.scrub(bytes: body.bytes)).base64EncodedString()
            content.encoding = "base64"
            content._contentEncoded = true
            return content
        }
        let redacted = redactor.body(body.bytes, contentType: type)
        if let text = String(validating: redacted, as: UTF8.self) {
            content.text = text
        } else {
            content.text = Data(redacted).base64EncodedString()
            content.encoding = "base64"
        }
        return content
    }

    static func fields(_ headers: [CurlCommand.Header]) -> [HARLog.NameValue] {
        headers.map { HARLog.NameValue(name: $0.name, value: $0.template) }
    }
}
