import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// The gateway's own HTTP/1 response framing: every split of the bytes frames
/// the same response, bodies are slices, and what llhttp refuses by default is
/// refused here too.
@Suite struct HTTP1ResponseFramerTests {
    /// What one response framed to: its head, its body's bytes, whether it ended.
    struct Framed: Equatable {
        var heads: [HTTPResponseHead] = []
        var untilClose: [Bool] = []
        var keepAlive: [Bool] = []
        var body = ""
        var ended = false
    }

    /// Frames `text` split into pieces of `step` bytes (the whole at once when nil).
    static func frame(_ text: String, step: Int? = nil, isHEAD: Bool = false, close: Bool = false) throws -> Framed {
        var framer = HTTP1ResponseFramer(maxHeadBytes: 256)
        framer.expectResponse(isHEAD: isHEAD)
        var framed = Framed()
        let bytes = Array(text.utf8)
        let size = step ?? max(bytes.count, 1)
        var offset = 0
        repeat {
            let piece = bytes[offset..<min(offset + size, bytes.count)]
            offset += piece.count
            framer.append(ByteBuffer(bytes: piece))
            while let event = try framer.next() { record(event, into: &framed) }
        } while offset < bytes.count
        if close, let event = framer.inputClosed() { record(event, into: &framed) }
        return framed
    }

    static func record(_ event: HTTP1ResponseFramer.Event, into framed: inout Framed) {
        switch event {
        case .head(let head):
            framed.heads.append(HTTPResponseHead(version: .http1_1, status: head.status, headers: head.fields.headers))
            framed.untilClose.append(head.untilClose)
            framed.keepAlive.append(head.keepAlive)
        case .body(let slice):
            framed.body += String(buffer: slice)
        case .end:
            framed.ended = true
        }
    }

    static let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n"
        + "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nTrailer-Field: x\r\n\r\n"

    @Test func aLengthDelimitedResponseFramesTheSameWhateverTheSplit() throws {
        let text = "HTTP/1.1 201 Created\r\nContent-Length: 11\r\nServer:  origin \r\n\r\nhello world"
        let whole = try Self.frame(text)
        #expect(whole.heads.count == 1)
        #expect(whole.heads.first?.status == .created)
        #expect(whole.heads.first?.headers["Server"] == ["origin"])
        #expect(whole.untilClose == [false])
        #expect(whole.body == "hello world")
        #expect(whole.ended)
        for step in 1...7 { #expect(try Self.frame(text, step: step) == whole) }
    }

    @Test func aChunkedBodyIsDechunkedAndItsTrailersDroppedWhateverTheSplit() throws {
        let whole = try Self.frame(Self.chunked)
        #expect(whole.body == "hello world")
        #expect(whole.ended)
        #expect(whole.heads.first?.headers["X-A"] == ["1"])
        for step in 1...9 { #expect(try Self.frame(Self.chunked, step: step) == whole) }
    }

    @Test func bodyPartsAreSlicesOfTheBytesRead() throws {
        var framer = HTTP1ResponseFramer()
        framer.expectResponse(isHEAD: false)
        let read = ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody")
        framer.append(read)
        _ = try framer.next()
        guard case .body(let slice) = try framer.next() else { Issue.record("no body"); return }
        let shared = slice.withUnsafeReadableBytes { part in
            read.withUnsafeReadableBytes { whole in part.baseAddress == whole.baseAddress! + whole.count - 4 }
        }
        #expect(shared)
        guard case .end = try framer.next() else {
            Issue.record("expected the end of the response")
            return
        }
        #expect(framer.state == .idle)
    }

    @Test func headAnd204And304HaveNoBodyWhateverTheirLength() throws {
        let head = try Self.frame("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", isHEAD: true)
        #expect(head.ended && head.body.isEmpty)
        for status in ["204 No Content", "304 Not Modified"] {
            let framed = try Self.frame("HTTP/1.1 \(status)\r\nContent-Length: 5\r\n\r\n")
            #expect(framed.ended && framed.body.isEmpty)
        }
    }

    @Test func informationalHeadsAreSkippedAnd101IsPassedOnToBeRefused() throws {
        let framed = try Self.frame("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", step: 5)
        #expect(framed.heads.map(\.status.code) == [200])
        #expect(framed.body == "ok" && framed.ended)
        let upgrade = try Self.frame("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n")
        #expect(upgrade.heads.map(\.status.code) == [101])
        #expect(upgrade.untilClose == [true])
    }

    @Test func aBodyWithoutLengthOrChunkingEndsWithTheConnection() throws {
        let framed = try Self.frame("HTTP/1.0 200 OK\r\n\r\nall of it", step: 4, close: true)
        #expect(framed.untilClose == [true])
        #expect(framed.body == "all of it" && framed.ended)
    }

    /// A transfer coding other than chunked alone is refused, in one field or
    /// across several (their codings all apply): the gateway decodes none of
    /// them, and the client's head never carries the upstream's
    /// `Transfer-Encoding`, so their bytes would reach it labelled identity.
    @Test(arguments: [
        ("Transfer-Encoding: gzip", "gzip"),
        ("Transfer-Encoding: deflate", "deflate"),
        ("Transfer-Encoding: gzip, chunked", "gzip, chunked"),
        ("Transfer-Encoding: chunked, gzip", "chunked, gzip"),
        ("Transfer-Encoding: gzip\r\nTransfer-Encoding: Chunked", "gzip, Chunked"),
        ("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "chunked, chunked"),
        ("Transfer-Encoding: x-custom;level=1 , chunked", "x-custom, chunked"),
        ("Transfer-Encoding: identity", "identity"),
        ("Transfer-Encoding: ", ""),
    ])
    func transferCodingsOtherThanChunkedAloneAreRefused(field: String, codings: String) throws {
        let text = "HTTP/1.1 200 OK\r\n\(field)\r\n\r\n1\r\nz\r\n0\r\n\r\n"
        #expect(throws: HTTP1FramingError.unsupportedTransferCoding) { try Self.frame(text, close: true) }
        #expect(throws: HTTP1FramingError.unsupportedTransferCoding) { try Self.frame(text, step: 1, close: true) }
    }

    @Test(arguments: ["chunked", "Chunked", "CHUNKED", "chunked,", " , chunked"])
    func chunkedAloneIsFramedAsChunked(_ value: String) throws {
        let framed = try Self.frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: \(value)\r\n\r\n1\r\nz\r\n0\r\n\r\n")
        #expect(framed.untilClose == [false] && framed.body == "z" && framed.ended)
    }

    @Test func repeatedEqualLengthsAreOneLength() throws {
        let framed = try Self.frame("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok")
        #expect(framed.body == "ok" && framed.ended)
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", HTTP1FramingError.invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 2x\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
        ("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", .contentLengthWithTransferEncoding),
        ("HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\n\r\n", .malformedHeaderLine),
        ("HTTP/1.1 200 OK\r\nX-Space : a\r\n\r\n", .malformedHeaderLine),
        ("HTTP/1.1 200 OK\r\nX-Bare: a\nX-Smuggled: b\r\n\r\n", .malformedHeaderLine),
        ("HTTP/1.1 200 OK\r\nX-Nul: a\u{0}b\r\n\r\n", .malformedHeaderLine),
        ("HTTP/1.1 200 OK\r\n: empty\r\n\r\n", .malformedHeaderLine),
        ("HTTP/2.0 200 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 20 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 600 Nope\r\n\r\n", .malformedStatusLine),
        ("ICY 200 OK\r\n\r\n", .malformedStatusLine),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokXX", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\nok", .malformedChunk),
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", .unsolicitedBytes),
    ] as [(String, HTTP1FramingError)])
    func responsesThatCouldBeReadTwoWaysAreRefused(text: String, error: HTTP1FramingError) throws {
        #expect(throws: error) { try Self.frame(text) }
        #expect(throws: error) { try Self.frame(text, step: 1) }
    }

    /// The same head scan as client requests: a bare LF fails the response at once,
    /// without waiting for a CRLFCRLF that may never come.
    @Test func aBareLineFeedIsRefusedBeforeTheHeadEnds() throws {
        var framer = HTTP1ResponseFramer(maxHeadBytes: 256)
        framer.expectResponse(isHEAD: false)
        framer.append(ByteBuffer(string: "HTTP/1.1 200 OK\r\nX-Bare: a\n"))
        #expect(throws: HTTP1FramingError.malformedHeaderLine) { try framer.next() }
        #expect(framer.state == .failed)
    }

    @Test func aHeadOverTheLimitIsRefusedBeforeItEnds() throws {
        var framer = HTTP1ResponseFramer(maxHeadBytes: 64)
        framer.expectResponse(isHEAD: false)
        framer.append(ByteBuffer(string: "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 60)))
        #expect(throws: HTTP1FramingError.headTooLarge) { try framer.next() }
        #expect(framer.state == .failed)
        framer.append(ByteBuffer(string: "\r\n\r\n"))
        #expect(try framer.next() == nil)
    }

    @Test func bytesWithNoRequestInFlightAreRefused() throws {
        var framer = HTTP1ResponseFramer()
        framer.append(ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n"))
        #expect(throws: HTTP1FramingError.unsolicitedBytes) { try framer.next() }
    }

    @Test func oneConnectionFramesResponseAfterResponse() throws {
        var framer = HTTP1ResponseFramer()
        var framed = Framed()
        for body in ["one", "two!"] {
            framer.expectResponse(isHEAD: false)
            framer.append(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"))
            while let event = try framer.next() { Self.record(event, into: &framed) }
            #expect(framer.state == .idle && !framer.hasUnframedBytes)
        }
        #expect(framed.heads.count == 2 && framed.body == "onetwo!")
    }

    @Test func keepAliveFollowsTheVersionAndConnectionField() throws {
        let old = try Self.frame("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(old.keepAlive == [false])
        let kept = try Self.frame("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n")
        #expect(kept.keepAlive == [true])
        let closed = try Self.frame("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        #expect(closed.keepAlive == [false])
        // A body read until close never leaves the connection reusable.
        let untilClose = try Self.frame("HTTP/1.1 200 OK\r\n\r\nabc", close: true)
        #expect(untilClose.keepAlive == [false] && untilClose.untilClose == [true])
    }
}
