import GatewayCore
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import GatewayUpstream

/// The streams of an upstream HTTP/2 connection as its own handler drives
/// them (no child channels): a client `NIOHTTP2Handler` and an
/// ``UpstreamHTTP2ConnectionHandler`` on one embedded channel, a server
/// `NIOHTTP2Handler` on another, bytes carried between them by hand.
struct UpstreamHTTP2StreamsTests {
    final class Pair {
        let client = EmbeddedChannel()
        let server = EmbeddedChannel()
        let handler: UpstreamHTTP2ConnectionHandler
        private(set) var serverFrames: [HTTP2Frame] = []
        var slotsFreed = 0

        init() throws {
            let settings = client.eventLoop.makePromise(of: Int.self)
            let events = HTTP2ConnectionEvents(maxStreamsChanged: { _ in }, goingAway: {}, streamEnded: {})
            handler = UpstreamHTTP2ConnectionHandler(
                firstSettings: settings, events: events, upstream: "origin:443", requestTimeout: .seconds(30), eventLoop: client.eventLoop
            )
            try client.pipeline.syncOperations.addHandler(
                NIOHTTP2Handler(
                    mode: .client, connectionConfiguration: HTTP2Connection.connectionConfiguration,
                    streamConfiguration: HTTP2Connection.streamConfiguration
                )
            )
            try client.pipeline.syncOperations.addHandler(handler)
            try server.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .server))
            try client.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
            try server.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            try exchange()
            #expect(try settings.futureResult.wait() == 100)
        }

        /// Carries bytes both ways until neither side has more to say.
        func exchange() throws {
            var moved = true
            while moved {
                moved = false
                client.embeddedEventLoop.run()
                while let bytes = try client.readOutbound(as: ByteBuffer.self) {
                    try server.writeInbound(bytes)
                    moved = true
                }
                while let frame = try server.readInbound(as: HTTP2Frame.self) {
                    serverFrames.append(frame)
                }
                while let bytes = try server.readOutbound(as: ByteBuffer.self) {
                    try client.writeInbound(bytes)
                    moved = true
                }
            }
        }

        func open(_ target: String, delegate: RecordingDelegate) -> UpstreamHTTP2Stream? {
            let request = PoolTest.request(port: 443, target, scheme: .https)
            let ticket = HTTP2StreamTicket(freeSlot: { self.slotsFreed += 1 }, notOpened: { _ in })
            return handler.openStream(request, recorder: AttemptRecorder(record: ExchangeRecord(), index: 0), delegate: delegate, ticket: ticket)
        }

        func serverSends(_ payload: HTTP2Frame.FramePayload, on stream: Int) throws {
            server.write(HTTP2Frame(streamID: HTTP2StreamID(stream), payload: payload), promise: nil)
            server.flush()
            try exchange()
        }

        func respond(on stream: Int, status: String = "200", body: String?, end: Bool = true) throws {
            let head = HPACKHeaders([(":status", status)])
            try serverSends(.headers(.init(headers: head, endStream: body == nil && end)), on: stream)
            if let body { try serverSends(.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: end)), on: stream) }
        }

        /// WINDOW_UPDATE frames the server received for `stream`.
        func windowUpdates(on stream: Int) -> [Int] {
            serverFrames.compactMap { frame in
                guard frame.streamID == HTTP2StreamID(stream), case .windowUpdate(let increment) = frame.payload else { return nil }
                return increment
            }
        }
    }

    @Test func streamsOnOneConnectionTakeRisingOddIdsAndTheirOwnResponses() throws {
        let pair = try Pair()
        let first = RecordingDelegate(), second = RecordingDelegate()
        #expect(pair.open("/a", delegate: first)?.id == 1)
        #expect(pair.open("/b", delegate: second)?.id == 3)
        try pair.exchange()
        let paths = pair.serverFrames.compactMap { frame -> String? in
            guard case .headers(let headers) = frame.payload else { return nil }
            return headers.headers.first(name: ":path")
        }
        #expect(paths == ["/a", "/b"])
        // Answered out of order: each stream gets its own.
        try pair.respond(on: 3, body: "second")
        try pair.respond(on: 1, body: "first")
        #expect(first.events == [.started, .head(status: 200, hasBody: true), .body("first"), .end])
        #expect(second.events == [.started, .head(status: 200, hasBody: true), .body("second"), .end])
        #expect(pair.slotsFreed == 2)
        #expect(pair.handler.streams.isEmpty)
    }

    /// The request timeouts of all streams run on the connection's one timer:
    /// each stream times out 30 s after it last heard from the server, not
    /// when the first one does, and an answered stream never does.
    @Test func requestTimeoutsRunOnTheConnectionsOneTimer() throws {
        let pair = try Pair()
        let loop = pair.client.embeddedEventLoop
        let first = RecordingDelegate(), answered = RecordingDelegate(), later = RecordingDelegate()
        _ = pair.open("/first", delegate: first)
        _ = pair.open("/answered", delegate: answered)
        try pair.exchange()
        loop.advanceTime(by: .seconds(10))
        _ = pair.open("/later", delegate: later)
        try pair.exchange()
        try pair.respond(on: 3, body: "ok")
        #expect(answered.events.last == .end)

        loop.advanceTime(by: .seconds(19))  // 29 s
        #expect(first.events == [.started])
        loop.advanceTime(by: .seconds(2))  // 31 s
        #expect(first.events == [.started, .failed(.requestTimeout)])
        #expect(later.events == [.started], "opened at 10 s: due at 40 s")
        // A head at 35 s is progress: the body is due 30 s after it.
        loop.advanceTime(by: .seconds(4))
        try pair.respond(on: 5, body: nil, end: false)
        loop.advanceTime(by: .seconds(29))  // 64 s
        #expect(later.events == [.started, .head(status: 200, hasBody: true)])
        loop.advanceTime(by: .seconds(2))  // 66 s
        #expect(later.events == [.started, .head(status: 200, hasBody: true), .failed(.requestTimeout)])
        #expect(answered.events.last == .end)
        #expect(pair.handler.streams.isEmpty)
        #expect(pair.slotsFreed == 3)
        #expect(pair.handler.timer == nil, "no stream left to time: the timer is not set again")
    }

    /// A reader that cannot take more holds its stream's frames here, and the
    /// stream's window is not refilled until they are handed on: the server is
    /// held back by flow control, the other streams go on.
    @Test func aSlowReaderHoldsItsFramesAndItsWindow() throws {
        let pair = try Pair()
        let slow = RecordingDelegate(), other = RecordingDelegate()
        _ = pair.open("/slow", delegate: slow)
        let otherStream = pair.open("/other", delegate: other)
        try pair.exchange()
        try pair.respond(on: 1, body: nil, end: false)
        slow.pause = true
        let chunk = String(repeating: "x", count: 16_384)
        for _ in 0..<4 { try pair.serverSends(.data(.init(data: .byteBuffer(ByteBuffer(string: chunk)))), on: 1) }
        try pair.serverSends(.data(.init(data: .byteBuffer(ByteBuffer(string: "end")), endStream: true)), on: 1)
        // The first part went on in its read; then the reader paused: the rest is held.
        #expect(slow.events == [.started, .head(status: 200, hasBody: true), .body(chunk)])
        #expect(pair.windowUpdates(on: 1).isEmpty)
        // Meanwhile another stream is answered.
        try pair.respond(on: 3, body: "fine")
        #expect(other.events.last == .end)
        #expect(otherStream?.machine.isDone == true)

        slow.pause = false
        slow.writer?.resumeReading()
        try pair.exchange()
        #expect(slow.events == [.started, .head(status: 200, hasBody: true)] + Array(repeating: .body(chunk), count: 4) + [.body("end"), .end])
        #expect(pair.slotsFreed == 2)
    }

    /// Once what a reader took brings the stream's window to half, it is
    /// refilled by what was taken.
    @Test func theStreamWindowIsRefilledAsTheReaderTakesFrames() throws {
        let pair = try Pair()
        let reader = RecordingDelegate()
        _ = pair.open("/big", delegate: reader)
        try pair.exchange()
        try pair.respond(on: 1, body: nil, end: false)
        let chunk = String(repeating: "y", count: 16_384)
        for _ in 0..<9 { try pair.serverSends(.data(.init(data: .byteBuffer(ByteBuffer(string: chunk)))), on: 1) }
        // 8 × 16 KiB = 128 KiB taken of a 256 KiB window: at half, refilled by what was taken, once.
        #expect(pair.windowUpdates(on: 1) == [8 * 16_384])
    }

    @Test func aResetFailsItsStreamOnly() throws {
        let pair = try Pair()
        let reset = RecordingDelegate(), other = RecordingDelegate()
        _ = pair.open("/reset", delegate: reset)
        _ = pair.open("/other", delegate: other)
        try pair.exchange()
        try pair.serverSends(.rstStream(.internalError), on: 1)
        #expect(reset.events == [.started, .failed(.connectionReset)])
        try pair.respond(on: 3, body: "ok")
        #expect(other.events.last == .end)
        #expect(pair.slotsFreed == 2)
    }

    @Test func aClosedConnectionFailsEveryStream() throws {
        let pair = try Pair()
        let first = RecordingDelegate(), second = RecordingDelegate()
        _ = pair.open("/a", delegate: first)
        _ = pair.open("/b", delegate: second)
        try pair.exchange()
        try pair.respond(on: 1, body: "part", end: false)
        pair.client.pipeline.fireChannelInactive()
        #expect(first.events.last == .failed(.connectionReset))
        #expect(second.events.last == .failed(.connectionReset))
        #expect(pair.handler.streams.isEmpty)
        #expect(pair.slotsFreed == 2)
    }

    /// A cancelled attempt resets its stream (RST_STREAM CANCEL): the server stops.
    @Test func cancellingResetsTheStream() throws {
        let pair = try Pair()
        let delegate = RecordingDelegate()
        let stream = pair.open("/cancelled", delegate: delegate)
        try pair.exchange()
        stream?.cancel()
        try pair.exchange()
        let resets = pair.serverFrames.filter { frame in
            if case .rstStream(.cancel) = frame.payload { return frame.streamID == 1 }
            return false
        }
        #expect(resets.count == 1)
        #expect(pair.slotsFreed == 1)
    }

    @Test func aGoingAwayConnectionOpensNoStream() throws {
        let pair = try Pair()
        try pair.serverSends(.goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil), on: 0)
        var notOpened = 0
        let ticket = HTTP2StreamTicket(freeSlot: {}, notOpened: { _ in notOpened += 1 })
        let opened = pair.handler.openStream(
            PoolTest.request(port: 443, "/late", scheme: .https), recorder: AttemptRecorder(record: ExchangeRecord(), index: 0),
            delegate: RecordingDelegate(), ticket: ticket
        )
        #expect(opened == nil)
        #expect(notOpened == 1)
    }
}

/// When a receive window is refilled, and by how much.
struct HTTP2InboundWindowTests {
    @Test func refillsToTheTargetOnceAtHalf() {
        var window = HTTP2InboundWindow(target: 100)
        #expect(window.reported(60) == nil)
        #expect(window.reported(50) == 50)
        #expect(window.reported(100) == nil)
    }

    @Test func heldBytesAreNotCreditedUntilHandedOn() {
        var window = HTTP2InboundWindow(target: 100)
        window.held(70)
        #expect(window.reported(30) == nil, "70 bytes are held: only what the reader took counts")
        #expect(window.handedOn(70) == 70)
    }

    @Test func aNegativeWindowIsRefilledByWhatItLacks() {
        var window = HTTP2InboundWindow(target: 100)
        #expect(window.reported(-20) == 120)
    }
}
