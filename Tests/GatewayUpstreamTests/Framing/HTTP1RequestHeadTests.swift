import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// The request heads the gateway writes upstream, byte for byte, and the fields
/// it refuses to write (what NIOHTTP1's outbound validator refused before).
struct HTTP1RequestHeadTests {
    @Test func writesTheRequestLineAndFieldsInOrder() throws {
        var head = try HTTP1RequestHead(method: .GET, target: "/a?b=1")
        try head.add(name: "Host", value: "api.test")
        try head.add(name: "X-Tab", value: "a\tb")
        try head.add(name: "X-Empty", value: "")
        head.end()
        #expect(String(buffer: head.bytes) == "GET /a?b=1 HTTP/1.1\r\nHost: api.test\r\nX-Tab: a\tb\r\nX-Empty: \r\n\r\n")
        #expect(!head.isHEAD)
        #expect(!head.isChunked)

        var chunked = try HTTP1RequestHead(method: .RAW(value: "PURGE"), target: "/")
        chunked.addChunkedFraming()
        chunked.end()
        #expect(String(buffer: chunked.bytes) == "PURGE / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(chunked.isChunked)
        #expect(try HTTP1RequestHead(method: .HEAD, target: "/").isHEAD)
    }

    /// Fields read from the client (checked as they were parsed) go as they
    /// came, each `name: value` CRLF in one write; an empty value keeps its
    /// space, and fields given as bytes are checked first.
    @Test func fieldsGivenAsBytesAreWrittenWhole() throws {
        var head = try HTTP1RequestHead(method: .GET, target: "/")
        let fields: [(String, String)] = [("Accept", "text/html, */*;q=0.8"), ("X-Empty", ""), ("Cookie", String(repeating: "c", count: 600))]
        for (name, value) in fields {
            Array(name.utf8).withUnsafeBytes { name in
                Array(value.utf8).withUnsafeBytes { value in head.addChecked(name: name, value: value) }
            }
        }
        try Array("X-Bytes".utf8).withUnsafeBytes { name in
            try Array("v".utf8).withUnsafeBytes { value in try head.add(name: name, value: value) }
        }
        #expect(throws: HTTP1RequestHead.InvalidField(name: "X-Split")) {
            try Array("X-Split".utf8).withUnsafeBytes { name in
                try Array("a\r\nb".utf8).withUnsafeBytes { value in try head.add(name: name, value: value) }
            }
        }
        head.end()
        let expected = "GET / HTTP/1.1\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "X-Bytes: v\r\n\r\n"
        #expect(String(buffer: head.bytes) == expected)
    }

    /// A value that could split the head is refused, naming the field and never the value.
    @Test(arguments: ["tok\r\nX-Evil: 1", "tok\nX-Evil: 1", "tok\r", "a\u{0}b", "a\u{7F}", "a\u{1B}[31m"])
    func valuesWithControlBytesAreRefused(_ value: String) throws {
        var head = try HTTP1RequestHead(method: .GET, target: "/")
        try head.add(name: "Host", value: "api.test")
        let before = head.bytes
        #expect(throws: HTTP1RequestHead.InvalidField(name: "Authorization")) {
            try head.add(name: "Authorization", value: value)
        }
        // Nothing of the refused field stays in the head.
        #expect(head.bytes == before)
    }

    @Test(arguments: ["", "X Evil", "X-Evil:", "X\r\nEvil", "Ünïcode", "(x)"])
    func namesThatAreNotTokensAreRefused(_ name: String) throws {
        var head = try HTTP1RequestHead(method: .GET, target: "/")
        #expect(throws: HTTP1RequestHead.InvalidField(name: nil)) {
            try head.add(name: name, value: "v")
        }
    }

    @Test(arguments: ["", "/a b", "/a\r\nX: 1", "/\u{7F}"])
    func targetsWithSpacesOrControlsAreRefused(_ target: String) {
        #expect(throws: HTTP1RequestHead.InvalidField(name: nil)) {
            _ = try HTTP1RequestHead(method: .GET, target: target)
        }
    }

    @Test func chunkFraming() {
        let allocator = ByteBufferAllocator()
        #expect(String(buffer: ChunkedFraming.sizeLine(255, allocator: allocator)) == "ff\r\n")
        #expect(String(buffer: ChunkedFraming.after(data: true, isLast: false)) == "\r\n")
        #expect(String(buffer: ChunkedFraming.after(data: true, isLast: true)) == "\r\n0\r\n\r\n")
        #expect(String(buffer: ChunkedFraming.after(data: false, isLast: true)) == "0\r\n\r\n")
        #expect(ChunkedFraming.after(data: false, isLast: false).readableBytes == 0)
    }

    /// The head a proxied request becomes: `Host` first when absent, hop-by-hop
    /// fields and the client's framing dropped, framing from the body.
    @Test func aProxyRequestsHead() throws {
        var headers = HTTPHeaders([("Accept", "*/*"), ("Content-Length", "99"), ("Connection", "x-hop"), ("X-Hop", "1")])
        headers.add(name: "X-Two", value: "a")
        headers.add(name: "X-Two", value: "b")
        let request = ProxyRequest(method: .POST, scheme: .http, host: "api.test", port: 8080, target: "/p", headers: RequestFields(headers), body: .bytes(ByteBuffer(string: "hello")))
        let head = try request.upstreamRequestHead()
        #expect(String(buffer: head.bytes) == "POST /p HTTP/1.1\r\nHost: api.test:8080\r\nAccept: */*\r\nX-Two: a\r\nX-Two: b\r\nContent-Length: 5\r\n\r\n")
    }

    @Test func aProxyRequestWithAnInjectedCRLFIsNotSentAndTheValueIsNotShown() throws {
        let request = ProxyRequest(method: .GET, scheme: .http, host: "api.test", port: 80, target: "/", headers: ["Authorization": "Bearer s3cret\r\nX-Evil: 1"])
        do {
            _ = try request.upstreamRequestHead()
            Issue.record("the head was written")
        } catch {
            #expect(error.code == .internalError)
            #expect(error.message.contains("Authorization"))
            #expect(!"\(error)".contains("s3cret"))
        }
    }
}
