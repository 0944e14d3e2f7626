import GatewayCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// The real upstream attempt handler behind the request encoder on an
/// `EmbeddedChannel`, framing the responses itself, the test playing the upstream
/// with raw bytes: reuse and close, bodies read until close, streamed request
/// bodies, back-pressure, malformed responses, failures and the request timeout on
/// the embedded loop's clock. No socket, no sleep.
struct UpstreamAttemptHandlerTests {
    @Test func oneKeepAliveAttempt() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(uri: "/a", delegate: delegate)
        #expect(try harness.sent() == "GET /a HTTP/1.1\r\nHost: upstream.test\r\n\r\n")
        #expect(delegate.events == [.started])
        #expect(record.attempts.first?.requestSent != nil)

        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nKeep-Alive: timeout=5\r\n\r\nhello")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("hello"), .end])
        #expect(delegate.head?.declaredLength == 5)
        // Hop-by-hop headers stay here.
        #expect(delegate.head?.headers.contains(name: "keep-alive") == false)
        #expect(harness.releases == [true])
        #expect(harness.channel.isActive)
        #expect(record.attempts.first?.status == 200)
        #expect(record.attempts.first?.end != nil)
    }

    /// Each read's parts are followed by one `upstreamReadComplete` (where the
    /// client side flushes); none once the response has ended.
    /// On a flush, passes it on, then writes bytes of its own without flushing
    /// them: the channel still buffers bytes after the handler's flush.
    final class LeavesBytesBuffered: ChannelOutboundHandler, @unchecked Sendable {
        typealias OutboundIn = ByteBuffer
        var leaveNext = true

        func flush(context: ChannelHandlerContext) {
            context.flush()
            guard leaveNext else { return }
            leaveNext = false
            context.write(NIOAny(ByteBuffer(string: "[held]")), promise: nil)
        }
    }

    /// A bodyless request is confirmed sent without a promise when the channel
    /// buffers nothing after its flush; when bytes stay buffered, an empty
    /// observed write confirms it once everything before it is written, and the
    /// connection is reused after the response as usual.
    @Test func aRequestStillBufferedAfterItsFlushIsConfirmedByAnObservedWrite() throws {
        let below = LeavesBytesBuffered()
        let harness = try UpstreamAttemptHarness(below: below)
        let delegate = RecordingDelegate()
        let record = try harness.start(uri: "/held", delegate: delegate)
        // The observed empty write's flush sent the held bytes too, and confirmed the request.
        #expect(try harness.sent() == "GET /held HTTP/1.1\r\nHost: upstream.test\r\n\r\n[held]")
        #expect(record.attempts.first?.requestSent != nil)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("ok"), .end])
        #expect(harness.releases == [true])

        // The next request finds nothing buffered: confirmed at once.
        let second = RecordingDelegate()
        let secondRecord = try harness.start(uri: "/next", delegate: second)
        #expect(try harness.sent() == "GET /next HTTP/1.1\r\nHost: upstream.test\r\n\r\n")
        #expect(secondRecord.attempts.first?.requestSent != nil)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(harness.releases == [true, true])
    }

    @Test func eachReadEndsWithOneReadComplete() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(uri: "/stream", delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n3\r\ntwo\r\n")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("one"), .body("two")])
        #expect(delegate.readCompletes == [4])
        try harness.respond("5\r\nthree\r\n")
        #expect(delegate.readCompletes == [4, 5])
        try harness.respond("0\r\n\r\n")
        #expect(delegate.events.last == .end)
        #expect(delegate.readCompletes == [4, 5])
    }

    @Test func twoExchangesInARowReuseTheConnection() throws {
        let harness = try UpstreamAttemptHarness()
        for path in ["/1", "/2"] {
            let delegate = RecordingDelegate()
            try harness.start(uri: path, delegate: delegate)
            #expect(try harness.sent().hasPrefix("GET \(path) HTTP/1.1\r\n"))
            try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("ok"), .end])
        }
        #expect(harness.releases == [true, true])
        #expect(harness.channel.isActive)
    }

    @Test func aResponseAskingToCloseClosesTheConnection() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("ok"), .end])
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
        // A lease that raced the close is refused before anything is written.
        #expect(throws: ConnectionClosedBeforeUse.self) {
            try harness.start(delegate: RecordingDelegate())
        }
        #expect(harness.releases == [false, false])
    }

    @Test func aHEADResponseHasNoBody() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(.HEAD, delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: false), .end])
        #expect(harness.releases == [true])
    }

    @Test func aStreamedRequestBodyGoesThroughTheWriter() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(.POST, headers: ["Host": "upstream.test", "Content-Length": "5"], body: .streamed, delegate: delegate)
        #expect(try harness.sent() == "POST / HTTP/1.1\r\nHost: upstream.test\r\nContent-Length: 5\r\n\r\n")
        let writer = try #require(delegate.writer)
        try writer.writeBodyPart(ByteBuffer(string: "hel"), isLast: false).wait()
        #expect(record.attempts.first?.requestSent == nil)
        try writer.writeBodyPart(ByteBuffer(string: "lo"), isLast: true).wait()
        #expect(try harness.sent() == "hello")
        #expect(record.attempts.first?.requestSent != nil)
        // Nothing may follow the end of the request.
        #expect(throws: GatewayError.self) { try writer.endRequest().wait() }

        try harness.respond("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(delegate.events == [.started, .head(status: 201, hasBody: false), .end])
        #expect(harness.releases == [true])
    }

    /// A body of unknown length goes chunked: each part framed, empty parts
    /// writing no chunk (a chunk of size 0 would end the body), the end as the last chunk.
    @Test func aStreamedBodyOfUnknownLengthIsChunked() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(.POST, headers: ["Host": "upstream.test", "Transfer-Encoding": "chunked"], body: .streamed, delegate: delegate)
        #expect(try harness.sent() == "POST / HTTP/1.1\r\nHost: upstream.test\r\nTransfer-Encoding: chunked\r\n\r\n")
        let writer = try #require(delegate.writer)
        try writer.writeBodyPart(ByteBuffer(string: "hello world, "), isLast: false).wait()
        try writer.writeBodyPart(ByteBuffer(), isLast: false).wait()
        #expect(try harness.sent() == "d\r\nhello world, \r\n")
        try writer.writeBodyPart(ByteBuffer(string: "bye"), isLast: false).wait()
        #expect(record.attempts.first?.requestSent == nil)
        try writer.endRequest().wait()
        #expect(try harness.sent() == "3\r\nbye\r\n0\r\n\r\n")
        #expect(record.attempts.first?.requestSent != nil)

        let second = RecordingDelegate()
        try harness.respond("HTTP/1.1 204 No Content\r\n\r\n")
        try harness.start(.POST, headers: ["Host": "upstream.test", "Transfer-Encoding": "chunked"], body: .streamed, delegate: second)
        _ = try harness.sent()
        try #require(second.writer).writeBodyPart(ByteBuffer(string: "last"), isLast: true).wait()
        #expect(try harness.sent() == "4\r\nlast\r\n0\r\n\r\n")
    }

    @Test func aResponseBeforeTheRequestBodyEndedClosesTheConnection() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(.POST, headers: ["Host": "upstream.test", "Content-Length": "10"], body: .streamed, delegate: delegate)
        let writer = try #require(delegate.writer)
        try writer.writeBodyPart(ByteBuffer(string: "abc"), isLast: false).wait()
        try harness.respond("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n")
        #expect(delegate.events == [.started, .head(status: 413, hasBody: false), .end])
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
        #expect(throws: GatewayError.self) { try writer.writeBodyPart(ByteBuffer(string: "defg"), isLast: false).wait() }
    }

    @Test func aPausedDelegateHoldsReadsUntilItResumes() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        delegate.pause = true
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("abc")])

        let readsBefore = harness.reads.count
        harness.channel.read()
        #expect(harness.reads.count == readsBefore)
        delegate.pause = false
        delegate.writer?.resumeReading()
        #expect(harness.reads.count == readsBefore + 1)
        harness.channel.read()
        #expect(harness.reads.count == readsBefore + 2)

        try harness.respond("def")
        #expect(delegate.events.suffix(2) == [.body("def"), .end])
        #expect(harness.releases == [true])
    }

    @Test func theUpstreamClosingMidBodyFailsTheAttempt() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        try harness.channel.close().wait()
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("abc"), .failed(.connectionReset)])
        #expect(harness.releases == [false])
        #expect(record.attempts.first?.errorCode == .connectionReset)
    }

    @Test func aBodyReadUntilCloseEndsWithTheCloseAndIsNotReused() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nabc")
        try harness.respond("def")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("abc"), .body("def")])
        #expect(delegate.head?.declaredLength == nil)
        try harness.channel.close().wait()
        #expect(delegate.events.last == .end)
        #expect(harness.releases == [false])
        #expect(record.attempts.first?.errorCode == nil)
    }

    @Test func informationalHeadsAreSkipped() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("ok"), .end])
        #expect(harness.releases == [true])
    }

    /// A WebSocket handshake's 101 hands the connection over: the handler
    /// leaves the pipeline, the bytes after the head go with the tunnel, the
    /// pool hears nothing (the connection was never its), and the channel stays open.
    @Test func aHandshakesSwitchingProtocolsHandsTheConnectionOver() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(upgrade: true, delegate: delegate)
        #expect(try harness.sent().contains("GET / HTTP/1.1\r\n"))
        try harness.respond("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(UpstreamAttemptHarness.sampleAccept)\r\n\r\n\u{81}\u{02}hi")
        #expect(delegate.events == [.started, .upgraded(status: 101, leftover: "\u{81}\u{02}hi")])
        #expect(delegate.head?.headers["sec-websocket-accept"] == [UpstreamAttemptHarness.sampleAccept])
        // Hop-by-hop fields stay behind: the client's side writes its own.
        #expect(delegate.head?.headers["upgrade"] == [])
        #expect(harness.releases.isEmpty)
        #expect(harness.channel.isActive)
        #expect(delegate.tunnel?.channel === harness.channel)
        #expect(throws: (any Error).self) { try harness.channel.pipeline.syncOperations.context(handlerType: UpstreamAttemptHandler.self) }
        #expect(record.attempts.first?.status == 101)
        // Later bytes are the tunnel's, not a protocol error.
        try harness.channel.writeInbound(ByteBuffer(string: "more"))
        #expect(delegate.events.count == 2)
    }

    /// A 101 to a request that asked for no upgrade is a protocol error; any
    /// other answer to a handshake is a normal response, and the connection closes after it.
    @Test func switchingProtocolsOnlyAnswersAHandshake() throws {
        let unasked = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try unasked.start(delegate: delegate)
        try unasked.respond("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n")
        #expect(delegate.events == [.started, .failed(.upstreamProtocolError)])
        #expect(!unasked.channel.isActive)

        let refused = try UpstreamAttemptHarness()
        let refusedDelegate = RecordingDelegate()
        try refused.start(upgrade: true, delegate: refusedDelegate)
        try refused.respond("HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno")
        #expect(refusedDelegate.events == [.started, .head(status: 403, hasBody: true), .body("no"), .end])
        #expect(refused.releases == [false])
        #expect(!refused.channel.isActive)
    }

    /// A 101 that is not a valid answer to the handshake (no or a wrong
    /// `Sec-WebSocket-Accept`, no `Upgrade: websocket`, no `Connection:
    /// upgrade`) is the upstream's protocol error: the connection closes and
    /// never becomes a raw tunnel past per-request policy.
    @Test func aSwitchingProtocolsThatDoesNotAnswerTheKeyIsAProtocolError() throws {
        let accept = UpstreamAttemptHarness.sampleAccept
        let invalid = [
            "Upgrade: websocket\r\nConnection: Upgrade\r\n",
            "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n",
            "Connection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n",
            "Upgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n",
            "Upgrade: websocket\r\nSec-WebSocket-Accept: \(accept)\r\n",
        ]
        for fields in invalid {
            let harness = try UpstreamAttemptHarness()
            let delegate = RecordingDelegate()
            try harness.start(upgrade: true, delegate: delegate)
            try harness.respond("HTTP/1.1 101 Switching Protocols\r\n\(fields)\r\nGET /raw HTTP/1.1\r\n\r\n")
            #expect(delegate.events == [.started, .failed(.upstreamProtocolError)], "\(fields)")
            #expect(delegate.tunnel == nil)
            #expect(!harness.channel.isActive)
        }
        // A handshake without a key cannot be answered by any 101.
        let keyless = try UpstreamAttemptHarness()
        let keylessDelegate = RecordingDelegate()
        try keyless.start(upgrade: true, webSocketKey: nil, delegate: keylessDelegate)
        try keyless.respond("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(keylessDelegate.events == [.started, .failed(.upstreamProtocolError)])
    }

    /// A response the framer refuses (here a smuggling shape) fails its attempt
    /// as the upstream's protocol error, and the connection is never reused.
    @Test func aMalformedResponseFailsTheAttempt() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        #expect(delegate.events == [.started, .failed(.upstreamProtocolError)])
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
        #expect(record.attempts.first?.errorCode == .upstreamProtocolError)
    }

    /// A body in a transfer coding the gateway does not decode (`gzip`, alone or
    /// before chunked) fails its attempt before any head reaches the delegate:
    /// the client gets a 502, not coded bytes labelled identity.
    @Test(arguments: ["gzip", "gzip, chunked"])
    func aResponseInAnotherTransferCodingFailsTheAttempt(_ coding: String) throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        let record = try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nTransfer-Encoding: \(coding)\r\n\r\n5\r\ncoded\r\n0\r\n\r\n")
        #expect(delegate.events == [.started, .failed(.upstreamProtocolError)])
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
        #expect(record.attempts.first?.errorCode == .upstreamProtocolError)
    }

    @Test func bytesAfterACompleteResponseCloseTheConnection() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n")
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true), .body("ok"), .end])
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
    }

    @Test func bytesOnAnIdleConnectionCloseIt() throws {
        let harness = try UpstreamAttemptHarness()
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        try harness.respond("HTTP/1.1 204 No Content\r\n\r\n")
        #expect(harness.releases == [true])
        try harness.respond("HTTP/1.1 200 OK\r\n\r\n")
        #expect(!harness.channel.isActive)
        #expect(delegate.events == [.started, .head(status: 204, hasBody: false), .end])
    }

    @Test func anUpstreamStallingMidBodyTimesOut() throws {
        let harness = try UpstreamAttemptHarness(requestTimeout: .seconds(5))
        let delegate = RecordingDelegate()
        try harness.start(delegate: delegate)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        try harness.respond("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
        // The timeout counts from the head, the last progress.
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(delegate.events == [.started, .head(status: 200, hasBody: true)])
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(delegate.events.last == .failed(.requestTimeout))
        #expect(harness.releases == [false])
        #expect(!harness.channel.isActive)
    }

    @Test func aReusedConnectionKeepsItsTimerTask() throws {
        let harness = try UpstreamAttemptHarness(requestTimeout: .seconds(5))
        try harness.start(delegate: RecordingDelegate())
        try harness.respond("HTTP/1.1 204 No Content\r\n\r\n")
        let pending = try #require(harness.handler.timer?.futureResult)

        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        let second = RecordingDelegate()
        try harness.start(delegate: second)
        // Same task: the one scheduled for the first attempt finds the new start
        // when it fires, and waits for the rest of the timeout.
        #expect(harness.handler.timer?.futureResult === pending)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        #expect(second.events == [.started])
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(second.events == [.started, .failed(.requestTimeout)])
        #expect(harness.releases == [true, false])
    }
}
