import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// What the one scan of a response head finds: the declared length (identical
/// values as fields or as a list are one length; disagreeing or malformed ones
/// are refused), keep-alive by version and `Connection`, and only end-to-end
/// fields kept for forwarding.
struct HTTP1ResponseHeadParserTests {
    static func parse(_ fields: [String], version: String = "HTTP/1.1") throws(HTTP1FramingError) -> HTTP1ResponseHeadParser.Parsed {
        let text = "\(version) 200 OK\r\n" + fields.map { $0 + "\r\n" }.joined() + "\r\n"
        return try HTTP1ResponseHeadParser.parse(ByteBuffer(string: text))
    }

    @Test func identicalValuesAreOneLength() throws {
        #expect(try Self.parse(["Content-Length: 5"]).declaredLength == 5)
        #expect(try Self.parse(["content-length:  12 "]).declaredLength == 12)
        #expect(try Self.parse(["Content-Length: 5", "CONTENT-LENGTH: 5"]).declaredLength == 5)
        #expect(try Self.parse(["Content-Length: 5, 5"]).declaredLength == 5)
        #expect(try Self.parse(["Content-Length: 0"]).declaredLength == 0)
        #expect(try Self.parse([]).declaredLength == nil)
        #expect(try Self.parse(["Transfer-Encoding: chunked"]).declaredLength == nil)
        // Read from the head's bytes: tabs and spaces around each listed value.
        #expect(try Self.parse(["Content-Length: \t7\t,7 ,  7"]).declaredLength == 7)
        #expect(try Self.parse(["Content-Length: 123456789012345678"]).declaredLength == 123_456_789_012_345_678)
    }

    @Test(arguments: [["Content-Length: 5,"], ["Content-Length: ,5"], ["Content-Length: 5 5"], ["Content-Length: +5"]])
    func emptyOrSplitListedLengthsAreRefused(_ fields: [String]) {
        #expect(throws: HTTP1FramingError.invalidContentLength) { try Self.parse(fields) }
    }

    /// A code NIO names keeps NIO's phrase; another keeps the upstream's.
    @Test func theReasonPhraseIsReadOnlyForACodeWithoutAName() throws {
        let known = try HTTP1ResponseHeadParser.parse(ByteBuffer(string: "HTTP/1.1 404 Gone Away\r\n\r\n"))
        #expect(known.status == .notFound)
        let custom = try HTTP1ResponseHeadParser.parse(ByteBuffer(string: "HTTP/1.1 299 Quite Fine\r\n\r\n"))
        #expect(custom.status.code == 299)
        #expect(custom.status.reasonPhrase == "Quite Fine")
        let bare = try HTTP1ResponseHeadParser.parse(ByteBuffer(string: "HTTP/1.1 299\r\n\r\n"))
        #expect(bare.status.code == 299)
        #expect(bare.status.reasonPhrase == "")
    }

    @Test(arguments: [["Content-Length: 5", "Content-Length: 6"], ["Content-Length: 5, 6"], ["Content-Length: -1"], ["Content-Length: 5x"],
                      ["Content-Length: "], ["Content-Length: 1234567890123456789"]])
    func disagreeingOrMalformedLengthsAreRefused(_ fields: [String]) {
        #expect(throws: HTTP1FramingError.invalidContentLength) { try Self.parse(fields) }
    }

    @Test func keepAliveFollowsTheVersionAndConnection() throws {
        #expect(try Self.parse([]).keepAlive)
        #expect(try !Self.parse(["Connection: close"]).keepAlive)
        #expect(try !Self.parse(["Connection: Keep-Alive, CLOSE"]).keepAlive)
        #expect(try !Self.parse([], version: "HTTP/1.0").keepAlive)
        #expect(try Self.parse(["Connection: keep-alive"], version: "HTTP/1.0").keepAlive)
        #expect(try !Self.parse(["Connection: keep-alive", "Connection: close"], version: "HTTP/1.0").keepAlive)
        // Tokens are read from the bytes: empty ones, tabs, and names that only start like an option.
        #expect(try !Self.parse(["Connection: ,\tclose\t,"]).keepAlive)
        #expect(try Self.parse(["Connection: closed, keep-alives"]).keepAlive)
        #expect(try !Self.parse(["Connection: x-keep-alive"], version: "HTTP/1.0").keepAlive)
    }

    /// Names a `Connection` field lists (not its options) are dropped with it.
    @Test func namesInConnectionAreReadFromTheBytes() throws {
        let parsed = try Self.parse(["Connection: \tX-One ,, x-two", "X-One: 1", "X-Two: 2", "X-Three: 3"])
        #expect(parsed.fields.headers.map(\.name) == ["X-Three"])
    }

    /// Hop-by-hop fields, and those `Connection` names, are not kept; the rest keep their order and case.
    @Test func onlyEndToEndFieldsAreKept() throws {
        let parsed = try Self.parse([
            "Server: origin", "Connection: keep-alive, X-Hop", "Keep-Alive: timeout=5", "X-Hop: 1",
            "Transfer-Encoding: chunked", "Upgrade: h2c", "x-a: 1", "Proxy-Authenticate: Basic", "Trailer: X-T", "X-A: 2",
        ])
        #expect(parsed.fields.headers.map { "\($0.name): \($0.value)" } == ["Server: origin", "x-a: 1", "X-A: 2"])
        #expect(parsed.framing == .chunked)
        #expect(parsed.keepAlive)
    }

    @Test func everyFieldIsKeptInOrderInOneArraySizedForTheHead() throws {
        let fields = (1...20).map { "X-Field-\($0): value \($0)" }
        let parsed = try Self.parse(fields + ["Connection: keep-alive"])
        #expect(parsed.fields.headers.map(\.name) == (1...20).map { "X-Field-\($0)" })
        #expect(parsed.fields.headers["X-Field-20"] == ["value 20"])
        let head = Array("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n".utf8)
        // Field lines plus the empty last line: the array has room for them and the `Via` added later.
        #expect(head.withUnsafeBytes { HTTP1HeadLines.lineCount(in: $0, from: 17) } == 3)
    }

    /// A usual head is kept as its bytes with the hop-by-hop lines marked; one
    /// too long for the mask as `HTTPHeaders`.
    @Test func fieldsStayBytesUnlessTheHeadIsLongOrNamesHopByHopFields() throws {
        let usual = try Self.parse(["Server: origin", "Connection: keep-alive", "Content-Length: 2"])
        guard case .lines(let lines, let dropped) = usual.fields.storage else {
            Issue.record("a usual head keeps its lines")
            return
        }
        #expect(String(buffer: lines) == "Server: origin\r\nConnection: keep-alive\r\nContent-Length: 2\r\n")
        #expect(dropped == 0b10)
        #expect(usual.fields.headers.map(\.name) == ["Server", "Content-Length"])

        let long = try Self.parse((1...70).map { "X-\($0): v" } + ["Keep-Alive: timeout=5"])
        guard case .headers(let headers) = long.fields.storage else {
            Issue.record("a head of more than 64 lines is HTTPHeaders")
            return
        }
        #expect(headers.count == 70)
        #expect(!headers.contains(name: "keep-alive"))

        // Fields named in `Connection` are dropped lines too: not passed on, still
        // readable as received (a WebSocket 101's `Upgrade` is checked that way).
        let named = try Self.parse(["X-Hop: 1", "Connection: X-Hop", "X-End: 2"])
        guard case .lines(_, let namedDropped) = named.fields.storage else {
            Issue.record("fields named in Connection are dropped lines")
            return
        }
        #expect(namedDropped == 0b011)
        #expect(named.fields.headers.map(\.name) == ["X-End"])
        #expect(named.fields.receivedHeaders.map(\.name) == ["X-Hop", "Connection", "X-End"])
    }
}
