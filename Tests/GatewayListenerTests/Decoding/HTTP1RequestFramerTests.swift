import GatewayCore
import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayListener

/// The listener's own HTTP/1 request framing: every split of the bytes frames
/// the same requests, bodies are slices of what was read, pipelined requests
/// follow each other, and what llhttp refuses by default is refused here too,
/// promptly and with the error the client gets.
@Suite struct HTTP1RequestFramerTests {
    /// What the bytes framed to, in order.
    struct Framed {
        var heads: [ClientRequestHead] = []
        var verdicts: [Result<RequestHeadValidator.BodyFraming, GatewayError>] = []
        var bodies: [String] = []
        var ends = 0
    }

    /// Frames `text` split into pieces of `step` bytes (the whole at once when nil).
    static func frame(_ text: String, step: Int? = nil, maxHeadBytes: Int = 1024) throws(GatewayError) -> Framed {
        var framer = HTTP1RequestFramer(maxHeadBytes: maxHeadBytes)
        return try frame(text, step: step, with: &framer)
    }

    static func frame(_ text: String, step: Int? = nil, with framer: inout HTTP1RequestFramer) throws(GatewayError) -> Framed {
        var framed = Framed()
        let bytes = Array(text.utf8)
        let size = step ?? max(bytes.count, 1)
        var offset = 0
        repeat {
            let piece = bytes[offset..<min(offset + size, bytes.count)]
            offset += piece.count
            framer.append(ByteBuffer(bytes: piece))
            while let part = try framer.next() {
                switch part {
                case .head(let head), .headWithBody(let head, _), .refused(let head, _):
                    framed.heads.append(head)
                    framed.verdicts.append(part.verdict!)
                    framed.bodies.append("")
                case .body(let slice):
                    framed.bodies[framed.bodies.count - 1] += String(buffer: slice)
                case .end:
                    framed.ends += 1
                }
            }
        } while offset < bytes.count
        return framed
    }

    static func error(_ text: String, maxHeadBytes: Int = 1024) -> GatewayError? {
        do {
            _ = try frame(text, maxHeadBytes: maxHeadBytes)
            return nil
        } catch {
            return error
        }
    }

    static let pipelined = "GET http://a.test/one HTTP/1.1\r\nHost: a.test\r\nUser-Agent:  curl/8 \r\n\r\n"
        + "POST http://a.test/two HTTP/1.1\r\nHost: a.test\r\nContent-Length: 11\r\n\r\nhello world"
        + "PUT http://a.test/three HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer-Field: x\r\n\r\n"
        + "\r\nDELETE http://a.test/four HTTP/1.0\r\n\r\n"

    @Test(arguments: [nil, 1, 2, 7, 64])
    func pipelinedRequestsFrameTheSameWhateverTheSplit(step: Int?) throws {
        let framed = try Self.frame(Self.pipelined, step: step)
        #expect(framed.heads.map(\.method) == [.GET, .POST, .PUT, .DELETE])
        #expect(framed.heads.map(\.uri) == ["http://a.test/one", "http://a.test/two", "http://a.test/three", "http://a.test/four"])
        #expect(framed.heads.map(\.version) == [.http1_1, .http1_1, .http1_1, .http1_0])
        #expect(framed.heads[0].headers["User-Agent"] == ["curl/8"])
        #expect(framed.heads[0].headers.map(\.name) == ["Host", "User-Agent"])
        let none = RequestHeadValidator.BodyFraming.none
        #expect(framed.verdicts.map { try? $0.get() } == [none, .length(11), .chunked, none])
        #expect(framed.bodies == ["", "hello world", "hello world", ""])
        #expect(framed.ends == 4)
    }

    @Test func bodyPartsAreSlicesOfTheBytesRead() throws {
        var framer = HTTP1RequestFramer(maxHeadBytes: 1024)
        var bytes = ByteBuffer(string: "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\n\r\nbody")
        let storage = bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        framer.append(bytes)
        guard case .headWithBody = try framer.next(), case .body(let body) = try framer.next() else {
            Issue.record("expected a head and a body part")
            return
        }
        let bodyAddress = body.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(bodyAddress == storage + UInt(bytes.readableBytes - 4))
        #expect(String(buffer: body) == "body")
        bytes.clear()
    }

    @Test func aRefusedHeadStopsTheFraming() throws {
        var framer = HTTP1RequestFramer(maxHeadBytes: 1024)
        let framed = try Self.frame(
            "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET http://a.test/ HTTP/1.1\r\n\r\n",
            with: &framer
        )
        #expect(framed.heads.count == 1)
        guard case .failure(let error) = framed.verdicts.first else {
            Issue.record("Content-Length with Transfer-Encoding must be refused")
            return
        }
        #expect(error.code == .requestSmuggling)
        #expect(framed.ends == 0)
        #expect(framer.state == .stopped)
        #expect(framer.takeUnparsed() == nil)
    }

    @Test(arguments: ["CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n"])
    func afterAnUpgradeLikeRequestTheBytesAreKeptUnparsed(head: String) throws {
        var framer = HTTP1RequestFramer(maxHeadBytes: 1024)
        let framed = try Self.frame(head + "\u{16}\u{03}\u{01} not HTTP\r\n\r\n", with: &framer)
        #expect(framed.heads.count == 1)
        #expect(framed.ends == 1)
        #expect(framer.state == .upgraded)
        #expect(framer.takeUnparsed().map { String(buffer: $0) } == "\u{16}\u{03}\u{01} not HTTP\r\n\r\n")
        #expect(framer.takeUnparsed() == nil)
    }

    @Test func aBareLineFeedIsRefusedBeforeTheHeadEnds() {
        // No CRLFCRLF ever comes: waiting for one would hold the connection until the head timeout.
        #expect(Self.error("GET http://a.test/ HTTP/1.1\nHost: a.test\n")?.code == .badRequest)
        #expect(Self.error("GET http://a.test/ HTTP/1.1\r\nHost: a.test\n\r\n")?.code == .badRequest)
    }

    static let malformedHeads: [String] = [
        "GE(T http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-Folded: a\r\n  b\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost : a.test\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nBad Header: x\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-Nul: a\u{0}b\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-CR: a\rb\r\n\r\n",
        "GET http://a.test/\u{7F} HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "GET  http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
        "GET http://a.test/ HTTP/2.0\r\nHost: a.test\r\n\r\n",
        "GET http://a.test/ HTTP/1.1 \r\nHost: a.test\r\n\r\n",
        "GET http://a.test/ http/1.1\r\nHost: a.test\r\n\r\n",
        "GET\r\nHost: a.test\r\n\r\n",
        "GET http://a.test/ HTTP/1.1\r\n: no name\r\n\r\n",
    ]

    @Test(arguments: malformedHeads)
    func malformedHeadsAreBadRequests(head: String) {
        #expect(Self.error(head)?.code == .badRequest, "\(head.debugDescription)")
    }

    @Test func headsOverTheLimitAreRefusedWhetherOrNotTheyEnd() {
        let long = "GET http://a.test/\(String(repeating: "a", count: 300)) HTTP/1.1\r\nHost: a.test\r\n"
        #expect(Self.error(long, maxHeadBytes: 256)?.code == .headTooLarge)
        #expect(Self.error(long + "\r\n", maxHeadBytes: 256)?.code == .headTooLarge)
        let fields = "GET http://a.test/ HTTP/1.1\r\n" + (0...256).map { "X-\($0): v\r\n" }.joined() + "\r\n"
        #expect(Self.error(fields, maxHeadBytes: 64 * 1024)?.code == .headTooLarge)
        #expect(Self.error("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", maxHeadBytes: 45) == nil)
    }

    /// Up to 64 fields are kept as the bytes read; a head with more has its
    /// fields made into strings. Both read the same, at the bound and past it.
    @Test(arguments: [0, 1, 63, 64, 65, 200])
    func headsOfAnyFieldCountReadTheSame(count: Int) throws {
        let lines = (0..<count).map { "X-\($0):  v\($0) \r\n" }.joined()
        let framed = try Self.frame("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n" + lines + "\r\n", maxHeadBytes: 64 * 1024)
        let head = try #require(framed.heads.first)
        #expect(head.headers.map { "\($0.name)=\($0.value)" } == ["Host=a.test"] + (0..<count).map { "X-\($0)=v\($0)" })
        #expect(head.headers.first(name: "x-\(max(count - 1, 0))") == (count > 0 ? "v\(count - 1)" : nil))
        var fields = head.headers
        fields.remove(name: "host")
        #expect(fields.count == count)
    }

    @Test(arguments: ["zz\r\n", "5\r\nhelloXX", "5\nhello\r\n", "1234567890123456\r\n", "5 x\u{1}\r\n"])
    func malformedChunksAreBadRequests(body: String) {
        let text = "POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n" + body
        #expect(Self.error(text)?.code == .badRequest, "\(body.debugDescription)")
    }

    @Test func commonMethodsAreRecognisedAndOthersKeptAsSent() {
        for method in [HTTPMethod.GET, .PUT, .POST, .HEAD, .PATCH, .DELETE, .CONNECT, .OPTIONS] {
            let parsed = Array(method.rawValue.utf8).withUnsafeBytes { HTTP1RequestHeadParser.method($0) }
            #expect(parsed == method)
        }
        #expect(Array("PURGE".utf8).withUnsafeBytes { HTTP1RequestHeadParser.method($0) } == .RAW(value: "PURGE"))
        #expect(Array("get".utf8).withUnsafeBytes { HTTP1RequestHeadParser.method($0) } == .RAW(value: "get"))
    }
}
