import NIOCore
import NIOHTTP1

/// How the admin listener writes its answers.
extension AdminServer {
    /// A route's answer: status, content type, body.
    typealias Answer = (status: Int, contentType: String, body: [UInt8])

    /// Writes `answer` with its length and `Cache-Control: no-store`, and
    /// `Connection: close` unless the connection stays open. An answer to HEAD
    /// (`headOnly`) has the head GET would get, its `Content-Length` included,
    /// and no body.
    static func write(
        _ answer: Answer,
        headOnly: Bool,
        keepAlive: Bool,
        extraHeaders: [(String, String)] = [],
        to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: answer.contentType)
        headers.add(name: "Content-Length", value: String(answer.body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(contentsOf: extraHeaders)
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: answer.status), headers: headers)
        var parts: [HTTPServerResponsePart] = [.head(head)]
        if !headOnly { parts.append(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))) }
        parts.append(.end(nil))
        try await outbound.write(contentsOf: parts)
    }

    /// Writes a refusal (421, 405) as JSON with `X-Gateway-Error` (and `Allow`
    /// for a 405), and `Connection: close`: the connection ends after it.
    static func write(
        _ refusal: AdminRefusal,
        headOnly: Bool,
        to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async throws {
        var extraHeaders = [("X-Gateway-Error", refusal.code)]
        if let allow = refusal.allow { extraHeaders.append(("Allow", allow)) }
        let answer: Answer = (refusal.status, "application/json", refusal.body)
        try await write(answer, headOnly: headOnly, keepAlive: false, extraHeaders: extraHeaders, to: outbound)
    }
}
