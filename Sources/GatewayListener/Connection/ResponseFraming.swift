import GatewayCore
import NIOHTTP1

/// The framing of a response fit for the client: `Content-Length` when known,
/// chunked for HTTP/1.1, close-delimited for HTTP/1.0; no body for HEAD, 1xx,
/// 204 and 304; `Connection: close` when the connection ends after it.
struct ResponseFraming {
    let head: HTTPResponseHead
    /// No body goes out, whatever the upstream sends.
    let bodyless: Bool
    /// The connection stays open after this response.
    let keepAlive: Bool

    init(
        status: HTTPResponseStatus,
        headers: HTTPHeaders,
        declaredLength: Int?,
        requestMethod: HTTPMethod,
        requestVersion: HTTPVersion,
        keepAlive: Bool
    ) {
        var headers = headers
        let code = status.code
        // `remove` copies shared fields even when it finds nothing: only called for fields that are there.
        let bodyless = requestMethod == .HEAD || code == 204 || code == 304 || (100..<200).contains(code)
        var keepAlive = keepAlive
        if headers.contains(name: "transfer-encoding") { headers.remove(name: "transfer-encoding") }
        if headers.contains(name: "connection") { headers.remove(name: "connection") }
        if bodyless {
            if code == 204 || (100..<200).contains(code), headers.contains(name: "content-length") { headers.remove(name: "content-length") }
        } else if let length = declaredLength {
            if headers.first(name: "content-length") != String(length) {
                headers.replaceOrAdd(name: "Content-Length", value: String(length))
            }
        } else if requestVersion.major == 1 && requestVersion.minor >= 1 {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        } else {
            keepAlive = false
        }
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if requestVersion == .http1_0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        self.head = HTTPResponseHead(version: requestVersion.minor == 0 ? .http1_0 : .http1_1, status: status, headers: headers)
        self.bodyless = bodyless
        self.keepAlive = keepAlive
    }
}
