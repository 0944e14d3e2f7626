import GatewayCore
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayUpstream

/// An exchange whose pooled connection runs on another event loop than the
/// client connection's (all of the client loop's connections were busy): every
/// call reaches the side it belongs to on that side's loop, in order, and
/// back-pressure crosses both ways. Two embedded loops, run by hand: nothing
/// arrives until its loop runs.
struct LoopHoppingDelegateTests {
    let clientLoop = EmbeddedEventLoop()
    let connectionLoop = EmbeddedEventLoop()
    let delegate = ClientSideRecorder()
    let writer: ConnectionSideWriter
    let hopping: LoopHoppingDelegate

    init() {
        writer = ConnectionSideWriter(loop: connectionLoop)
        hopping = LoopHoppingDelegate(delegate: delegate, delegateLoop: clientLoop, connectionLoop: connectionLoop)
    }

    /// What the upstream handler does, on the connection's loop.
    private func startAndAnswer(parts: [String]) {
        hopping.upstreamAttemptStarted(writer)
        hopping.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: ["content-length": "4"], declaredLength: 4, hasBody: true))
        for part in parts { hopping.upstreamResponseBodyPart(ByteBuffer(string: part)) }
        hopping.upstreamReadComplete()
        hopping.upstreamResponseEnd()
    }

    @Test func theResponseReachesTheClientLoopInOrderOnlyWhenThatLoopRuns() throws {
        startAndAnswer(parts: ["ab", "cd"])
        #expect(delegate.events.isEmpty, "nothing is called on the connection's loop")
        clientLoop.run()
        #expect(delegate.events == ["started", "head 200", "part ab", "part cd", "read complete", "end"])
    }

    @Test func aFailureHopsToo() {
        hopping.upstreamAttemptStarted(writer)
        hopping.upstreamAttemptFailed(GatewayError(.connectionReset, "reset", upstream: "api.test:443"))
        clientLoop.run()
        #expect(delegate.events == ["started", "failed connection_reset"])
    }

    @Test func theRequestBodyIsWrittenOnTheConnectionLoopAndCompletesOnTheClientLoop() throws {
        hopping.upstreamAttemptStarted(writer)
        clientLoop.run()
        let clientWriter = try #require(delegate.writer)
        let written = clientWriter.writeBodyPart(ByteBuffer(string: "hello"), isLast: false)
        let ended = clientWriter.endRequest()
        #expect(writer.events.isEmpty, "not written until the connection's loop runs")
        connectionLoop.run()
        #expect(writer.events == ["body hello", "end"])
        #expect(written.eventLoop === clientLoop, "completed on the client's loop")
        clientLoop.run()
        try written.wait()
        try ended.wait()
        clientWriter.abort(CancellationError())
        connectionLoop.run()
        #expect(writer.events.last == "abort")
    }

    @Test func backPressureCrossesBothWays() throws {
        hopping.upstreamAttemptStarted(writer)
        delegate.pauseAfterEachPart = true
        hopping.upstreamResponseBodyPart(ByteBuffer(string: "ab"))
        #expect(!hopping.upstreamShouldPauseReading)
        clientLoop.run()
        connectionLoop.run()
        #expect(hopping.upstreamShouldPauseReading, "the client's answer is carried back to the connection's loop")

        let clientWriter = try #require(delegate.writer)
        clientWriter.resumeReading()
        #expect(hopping.upstreamShouldPauseReading)
        connectionLoop.run()
        #expect(!hopping.upstreamShouldPauseReading)
        #expect(writer.events == ["resume"])
    }
}

/// The client side: records the calls it gets.
final class ClientSideRecorder: UpstreamAttemptDelegate, @unchecked Sendable {
    var events: [String] = []
    var writer: (any UpstreamRequestWriter)?
    var pauseAfterEachPart = false
    private var paused = false

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        events.append("started")
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) { events.append("head \(head.status.code)") }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        events.append("part \(String(buffer: buffer))")
        if pauseAfterEachPart { paused = true }
    }

    func upstreamReadComplete() { events.append("read complete") }
    func upstreamResponseEnd() { events.append("end") }
    func upstreamAttemptFailed(_ error: any Error) { events.append("failed \((error as? GatewayError)?.code.rawValue ?? "\(error)")") }
    var upstreamShouldPauseReading: Bool { paused }
}

/// The connection side's request writer.
final class ConnectionSideWriter: UpstreamRequestWriter, @unchecked Sendable {
    var events: [String] = []
    let loop: any EventLoop

    init(loop: any EventLoop) {
        self.loop = loop
    }

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        events.append("body \(String(buffer: chunk))")
        return loop.makeSucceededVoidFuture()
    }

    func endRequest() -> EventLoopFuture<Void> {
        events.append("end")
        return loop.makeSucceededVoidFuture()
    }

    func abort(_ error: any Error) { events.append("abort") }
    func resumeReading() { events.append("resume") }
}
