import GatewayCore
import NIOCore
import NIOHTTP1

extension ProxyConnection {
    /// Writes a response with framing fit for the client: Content-Length when
    /// known, chunked for HTTP/1.1, close-delimited for HTTP/1.0; no body for
    /// HEAD, 1xx, 204 and 304. Throws if the body fails mid-way (the caller then
    /// closes the connection so the truncation is visible).
    /// Returns the number of body bytes written.
    @discardableResult
    func write(
        _ response: ProxyResponse,
        requestMethod: HTTPMethod,
        requestVersion: HTTPVersion,
        keepAlive: Bool,
        outbound: Outbound
    ) async throws -> Int {
        var headers = response.headers
        let code = response.status.code
        let bodyless = requestMethod == .HEAD || code == 204 || code == 304 || (100..<200).contains(code)
        var keepAlive = keepAlive
        headers.remove(name: "transfer-encoding")
        headers.remove(name: "connection")
        if bodyless {
            if code == 204 || (100..<200).contains(code) { headers.remove(name: "content-length") }
        } else if let length = response.body.declaredLength {
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
        let head = HTTPResponseHead(version: requestVersion.minor == 0 ? .http1_0 : .http1_1, status: response.status, headers: headers)

        if bodyless {
            response.body.discard()
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
            return 0
        }
        switch response.body.storage {
        case .empty:
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
            return 0
        case .bytes(let buffer):
            try await outbound.write(contentsOf: [.head(head), .body(.byteBuffer(buffer)), .end(nil)])
            return buffer.readableBytes
        case .stream(let source):
            var written = 0
            do {
                // What the source already holds goes out with the head (and the end) in
                // one write and one flush: for a small response, the whole of it.
                var parts: [HTTPServerResponsePart] = [.head(head)]
                while true {
                    let ready = Self.takeReady(from: source, into: &parts, written: &written)
                    if case .success(true) = ready { parts.append(.end(nil)) }
                    try await outbound.write(contentsOf: parts)
                    switch ready {
                    case .success(true): return written
                    case .success(false): break
                    case .failure(let error): throw error
                    }
                    guard let chunk = try await source.next() else {
                        try await outbound.write(.end(nil))
                        return written
                    }
                    written += chunk.readableBytes
                    parts = [.body(.byteBuffer(chunk))]
                }
            } catch {
                source.cancel()
                throw error
            }
        }
    }

    /// Most bytes batched into one write from chunks a source already holds.
    static let readyBatchLimit = 256 * 1024

    /// Moves the chunks `source` holds already into `parts`, without waiting.
    /// `true` at the end of the body; a failure is returned to be thrown once
    /// `parts` are written (the client sees the same truncated response as before).
    private static func takeReady(from source: any BodySource, into parts: inout [HTTPServerResponsePart], written: inout Int) -> Result<Bool, any Error> {
        var batched = 0
        while batched < readyBatchLimit {
            do {
                switch try source.nextIfReady() {
                case .chunk(let chunk):
                    batched += chunk.readableBytes
                    written += chunk.readableBytes
                    parts.append(.body(.byteBuffer(chunk)))
                case .end:
                    return .success(true)
                case .notReady:
                    return .success(false)
                }
            } catch {
                return .failure(error)
            }
        }
        return .success(false)
    }
}
