import GatewayCore
@testable import GatewayListener
import NIOCore
import NIOEmbedded
import Testing

/// Responses flush at the end of their loop's tick (``LoopFlushBatch``): written
/// at once, on the wire only when the tick's tasks run, in order; a close in
/// between sends them first.
@Suite struct LoopFlushBatchTests {
    @Test func aResponseGoesOutWhenTheTickEnds() throws {
        let harness = try ClientConnectionHarness(flushBatches: LoopFlushBatches())
        try harness.send("GET http://example.test/1 HTTP/1.1\r\nHost: example.test\r\n\r\n")
        harness.answer(body: "one")
        #expect(try harness.received() == "", "written, its flush waiting for the end of the tick")
        harness.channel.embeddedEventLoop.run()
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(response)")
        #expect(response.hasSuffix("one"))
    }

    @Test func pipelinedResponsesOfOneTickFlushTogetherInOrder() throws {
        let harness = try ClientConnectionHarness(flushBatches: LoopFlushBatches())
        try harness.send(
            "GET http://example.test/1 HTTP/1.1\r\nHost: example.test\r\n\r\n"
                + "GET http://example.test/2 HTTP/1.1\r\nHost: example.test\r\n\r\n"
        )
        harness.answer(body: "one")
        harness.answer(body: "two")
        #expect(try harness.received() == "")
        harness.channel.embeddedEventLoop.run()
        let response = try harness.received()
        let one = try #require(response.range(of: "one"))
        let two = try #require(response.range(of: "two"))
        #expect(one.lowerBound < two.lowerBound)
    }

    @Test func aCloseSendsWhatWaitsFirst() throws {
        let harness = try ClientConnectionHarness(flushBatches: LoopFlushBatches())
        try harness.send("GET http://example.test/1 HTTP/1.1\r\nHost: example.test\r\n\r\n")
        harness.answer(body: "one")
        // Draining closes an idle connection at once (here before the tick's
        // tasks run): the response waiting for the end of the tick goes first.
        try harness.channel.pipeline.syncOperations.handler(type: ClientConnectionHandler.self).drainRequested()
        #expect(try harness.received().hasSuffix("one"))
        #expect(!harness.channel.isActive)
    }
}
