@testable import GatewayListener
import NIOCore
import NIOHTTP1
import Testing

/// The heads the gateway writes to clients, byte for byte: its framing replaces
/// the upstream's, the upstream's other fields keep their order.
@Suite struct ResponseFramingTests {
    private func head(_ framing: ResponseFraming) -> String { String(buffer: framing.head) }

    @Test func knownLengthKeepsAlive() {
        let framing = ResponseFraming(
            status: .ok, headers: ["Content-Type": "text/plain", "Content-Length": "5", "ETag": "\"x\""], declaredLength: 5,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: true, via: "1.1 gateway"
        )
        #expect(framing.keepAlive)
        #expect(!framing.bodyless)
        #expect(!framing.chunked)
        #expect(head(framing) == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nETag: \"x\"\r\nVia: 1.1 gateway\r\n\r\n")
    }

    @Test func unknownLengthIsChunkedForHTTP11AndCloseDelimitedForHTTP10() {
        let chunked = ResponseFraming(status: .ok, headers: [:], declaredLength: nil, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(head(chunked) == "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(chunked.keepAlive)
        #expect(chunked.chunked)
        let old = ResponseFraming(status: .ok, headers: [:], declaredLength: nil, requestMethod: .GET, requestVersion: .http1_0, keepAlive: true)
        #expect(!old.keepAlive)
        #expect(!old.chunked)
        #expect(head(old) == "HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n")
        let oldKept = ResponseFraming(status: .ok, headers: [:], declaredLength: 0, requestMethod: .GET, requestVersion: .http1_0, keepAlive: true)
        #expect(head(oldKept) == "HTTP/1.0 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n")
    }

    @Test func headAnd204And304HaveNoBody() {
        for (method, status) in [(HTTPMethod.HEAD, HTTPResponseStatus.ok), (.GET, .noContent), (.GET, .notModified)] {
            let framing = ResponseFraming(status: status, headers: ["Content-Length": "9"], declaredLength: 9, requestMethod: method, requestVersion: .http1_1, keepAlive: true)
            #expect(framing.bodyless)
            #expect(!framing.chunked)
        }
        // HEAD and 304 keep the length the upstream declared; 204 has none.
        let headResponse = ResponseFraming(status: .ok, headers: ["Content-Length": "9"], declaredLength: 9, requestMethod: .HEAD, requestVersion: .http1_1, keepAlive: true)
        #expect(head(headResponse) == "HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n")
        let noContent = ResponseFraming(status: .noContent, headers: ["Content-Length": "0"], declaredLength: 0, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(head(noContent) == "HTTP/1.1 204 No Content\r\n\r\n")
    }

    @Test func upstreamFramingAndConnectionHeadersAreReplaced() {
        let framing = ResponseFraming(
            status: .ok, headers: ["Transfer-Encoding": "chunked", "Connection": "keep-alive", "X-A": "1"], declaredLength: 3,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: false
        )
        #expect(head(framing) == "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 3\r\nConnection: close\r\n\r\n")
        // Repeated lengths become the one declared, in the place of the first.
        let repeated = ResponseFraming(
            status: .ok, headers: HTTPHeaders([("Content-Length", "3"), ("X-A", "1"), ("Content-Length", "3")]), declaredLength: 3,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: true
        )
        #expect(head(repeated) == "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nX-A: 1\r\n\r\n")
    }

    @Test func customStatusesAndBareHeads() {
        let custom = ResponseFraming(
            status: .custom(code: 599, reasonPhrase: "Odd"), headers: [:], declaredLength: 0,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: true
        )
        #expect(head(custom) == "HTTP/1.1 599 Odd\r\nContent-Length: 0\r\n\r\n")
        #expect(String(buffer: ResponseFraming.bareHead(version: .http1_0, code: 200, reason: "Connection Established")) == "HTTP/1.0 200 Connection Established\r\n\r\n")
    }
}
