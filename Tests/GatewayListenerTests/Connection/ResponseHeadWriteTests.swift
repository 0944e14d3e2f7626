import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOHTTP1
import Testing

/// How a response's head reaches the client: it waits for the first body
/// part and goes in the same buffer when both fit in a spare head buffer (one
/// write for a small response, not two), and before anything else otherwise:
/// a larger body, a chunk, the end of a bodyless response, a flush.
struct ResponseHeadWriteTests {
    /// Each buffer written to the client, in order, as text.
    private func writes(_ harness: ClientConnectionHarness) throws -> [String] {
        var writes: [String] = []
        while let buffer = try harness.channel.readOutbound(as: ByteBuffer.self) { writes.append(String(buffer: buffer)) }
        return writes
    }

    private func start(_ harness: ClientConnectionHarness, method: String = "GET") throws -> ScriptedTransport.Attempt {
        try harness.send("\(method) http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n")
        let attempt = try #require(harness.transport.attempts.last)
        attempt.delegate?.upstreamAttemptStarted(attempt.writer)
        return attempt
    }

    private func head(_ status: HTTPResponseStatus = .ok, length: Int?, chunked: Bool = false) -> UpstreamResponseHead {
        var headers = HTTPHeaders()
        if let length { headers.add(name: "Content-Length", value: "\(length)") }
        if chunked { headers.add(name: "Transfer-Encoding", value: "chunked") }
        return UpstreamResponseHead(status: status, headers: headers, declaredLength: length, hasBody: chunked || (length ?? 0) > 0)
    }

    @Test func aSmallResponseGoesAsOneWrite() throws {
        let harness = try ClientConnectionHarness()
        try harness.send("GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n")
        harness.answer(body: "hello")
        let written = try writes(harness)
        #expect(written.count == 1)
        #expect(written.first?.hasPrefix("HTTP/1.1 200 OK\r\n") == true)
        #expect(written.first?.hasSuffix("\r\n\r\nhello") == true)
    }

    @Test func aBodyTooLargeToJoinTheHeadGoesAfterIt() throws {
        let harness = try ClientConnectionHarness()
        let body = String(repeating: "x", count: ByteBuffer.maxSpareHeadBytes)
        try harness.send("GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n")
        harness.answer(body: body)
        let written = try writes(harness)
        #expect(written.count == 2)
        #expect(written.first?.hasSuffix("\r\n\r\n") == true)
        #expect(written.last == body)
    }

    /// Only the first part joins the head; the next ones are written as they come, in order.
    @Test func laterPartsFollowTheHeadInOrder() throws {
        let harness = try ClientConnectionHarness()
        let attempt = try start(harness)
        attempt.delegate?.upstreamResponseHead(head(length: 9))
        #expect(try writes(harness).isEmpty)  // the head waits for the first part
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "one"))
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "two"))
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "333"))
        attempt.delegate?.upstreamResponseEnd()
        let written = try writes(harness)
        #expect(written.count == 3)
        #expect(written.first?.contains("\r\nContent-Length: 9\r\n") == true)
        #expect(written.first?.hasSuffix("\r\n\r\none") == true)
        #expect(Array(written.dropFirst()) == ["two", "333"])
    }

    /// A response with no body (here a 204) still sends its head, at its end.
    @Test func aBodylessResponseSendsItsHeadAtItsEnd() throws {
        let harness = try ClientConnectionHarness()
        let attempt = try start(harness)
        attempt.delegate?.upstreamResponseHead(head(.noContent, length: nil))
        attempt.delegate?.upstreamResponseEnd()
        let written = try writes(harness).joined()
        #expect(written.hasPrefix("HTTP/1.1 204 No Content\r\n"))
        #expect(written.hasSuffix("\r\n\r\n"))
        #expect(harness.channel.isActive)
    }

    /// A chunked response writes its head before the first chunk's size line.
    @Test func aChunkedResponseWritesItsHeadBeforeTheFirstChunk() throws {
        let harness = try ClientConnectionHarness()
        let attempt = try start(harness)
        attempt.delegate?.upstreamResponseHead(head(length: nil, chunked: true))
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "hello"))
        attempt.delegate?.upstreamResponseEnd()
        let written = try writes(harness).joined()
        #expect(written.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(written.hasSuffix("\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
    }

    /// A flush before any body part (the exchange flushes what one upstream read gave) sends the head.
    @Test func aFlushSendsAWaitingHead() throws {
        let harness = try ClientConnectionHarness()
        let attempt = try start(harness)
        attempt.delegate?.upstreamResponseHead(head(length: 5))
        try harness.channel.pipeline.syncOperations.handler(type: ClientConnectionHandler.self).flushResponse()
        let written = try writes(harness)
        #expect(written.count == 1)
        #expect(written.first?.contains("\r\nContent-Length: 5\r\n") == true)
        #expect(written.first?.hasSuffix("\r\n\r\n") == true)
        attempt.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "hello"))
        attempt.delegate?.upstreamResponseEnd()
        #expect(try writes(harness) == ["hello"])
    }
}
