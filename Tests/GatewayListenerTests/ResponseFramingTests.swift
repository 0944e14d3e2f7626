@testable import GatewayListener
import NIOHTTP1
import Testing

@Suite struct ResponseFramingTests {
    @Test func knownLengthKeepsAlive() {
        let framing = ResponseFraming(status: .ok, headers: ["Content-Length": "5"], declaredLength: 5, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(framing.keepAlive)
        #expect(!framing.bodyless)
        #expect(framing.head.headers["content-length"] == ["5"])
        #expect(!framing.head.headers.contains(name: "connection"))
    }

    @Test func unknownLengthIsChunkedForHTTP11AndCloseDelimitedForHTTP10() {
        let chunked = ResponseFraming(status: .ok, headers: [:], declaredLength: nil, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(chunked.head.headers["transfer-encoding"] == ["chunked"])
        #expect(chunked.keepAlive)
        let old = ResponseFraming(status: .ok, headers: [:], declaredLength: nil, requestMethod: .GET, requestVersion: .http1_0, keepAlive: true)
        #expect(!old.keepAlive)
        #expect(old.head.headers["connection"] == ["close"])
        #expect(!old.head.headers.contains(name: "transfer-encoding"))
    }

    @Test func headAnd204And304HaveNoBody() {
        for (method, status) in [(HTTPMethod.HEAD, HTTPResponseStatus.ok), (.GET, .noContent), (.GET, .notModified)] {
            let framing = ResponseFraming(status: status, headers: ["Content-Length": "9"], declaredLength: 9, requestMethod: method, requestVersion: .http1_1, keepAlive: true)
            #expect(framing.bodyless)
        }
        let noContent = ResponseFraming(status: .noContent, headers: ["Content-Length": "0"], declaredLength: 0, requestMethod: .GET, requestVersion: .http1_1, keepAlive: true)
        #expect(!noContent.head.headers.contains(name: "content-length"))
    }

    @Test func upstreamFramingAndConnectionHeadersAreReplaced() {
        let framing = ResponseFraming(
            status: .ok, headers: ["Transfer-Encoding": "chunked", "Connection": "keep-alive"], declaredLength: 3,
            requestMethod: .GET, requestVersion: .http1_1, keepAlive: false
        )
        #expect(framing.head.headers["transfer-encoding"].isEmpty)
        #expect(framing.head.headers["content-length"] == ["3"])
        #expect(framing.head.headers["connection"] == ["close"])
    }
}
