@testable import GatewayListener
import Testing

@Suite struct ClientConnectionStateMachineTests {
    @Test func keepAliveExchangeReturnsToIdle() {
        var machine = ClientConnectionStateMachine()
        #expect(machine.requestHead(keepAlive: true) == .start)
        #expect(machine.requestEnd() == .forward)
        #expect(!machine.responseStarted)
        let keptAlive = machine.responseHead(keepAlive: true)
        #expect(keptAlive)
        #expect(machine.responseStarted)
        #expect(machine.responseEnd() == .exchangeDone(keepAlive: true))
        #expect(machine.isIdle)
        #expect(machine.allowsRead)
    }

    @Test func readsGoOnAfterAKeepAliveRequestSoTheNextOneCanBeQueued() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: true)
        #expect(machine.allowsRead, "the body may still come")
        _ = machine.requestEnd()
        #expect(machine.allowsRead, "what follows is the next request (no epoll_ctl per request)")
        _ = machine.responseHead(keepAlive: true)
        _ = machine.responseEnd()
        #expect(machine.allowsRead)
    }

    @Test func readsAreHeldAfterARequestThatEndsTheConnection() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: false)
        _ = machine.requestEnd()
        #expect(!machine.allowsRead, "an upgrade-like request: the decoder would buffer what follows")

        var closing = ClientConnectionStateMachine()
        _ = closing.requestHead(keepAlive: true)
        _ = closing.requestEnd()
        _ = closing.responseHead(keepAlive: false)
        #expect(!closing.allowsRead, "the response closes the connection")
    }

    @Test func pipelinedPartsAreQueuedUntilTheExchangeEnds() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: true)
        _ = machine.requestEnd()
        #expect(machine.requestHead(keepAlive: true) == .queue)
        #expect(machine.requestBody() == .queue)
        #expect(machine.requestEnd() == .queue)
    }

    @Test func aResponseThatEndsBeforeTheRequestBodyDiscardsTheRest() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: true)
        #expect(machine.requestBody() == .forward)
        _ = machine.responseHead(keepAlive: true)
        #expect(machine.responseEnd() == .awaitRequestEnd(keepAlive: true))
        #expect(machine.requestBody() == .discard)
        #expect(machine.requestEnd() == .exchangeDone(keepAlive: true))
        #expect(machine.isIdle)
    }

    @Test func aClientOrResponseWithoutKeepAliveEndsInClosing() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: false)
        _ = machine.requestEnd()
        let keptAlive = machine.responseHead(keepAlive: true)
        #expect(!keptAlive, "the client asked to close")
        #expect(machine.responseEnd() == .exchangeDone(keepAlive: false))
        #expect(machine.state == .closing)
        #expect(!machine.allowsRead)
        #expect(machine.requestHead(keepAlive: true) == .ignore)

        var upstreamCloses = ClientConnectionStateMachine()
        _ = upstreamCloses.requestHead(keepAlive: true)
        _ = upstreamCloses.requestEnd()
        let upstreamKeptAlive = upstreamCloses.responseHead(keepAlive: false)
        #expect(!upstreamKeptAlive, "framing forced a close (HTTP/1.0 without length)")
        #expect(upstreamCloses.responseEnd() == .exchangeDone(keepAlive: false))
    }

    @Test func connectHandsTheConnectionOverAndIgnoresHTTPAfterwards() {
        var machine = ClientConnectionStateMachine()
        _ = machine.requestHead(keepAlive: false)
        machine.handOver()
        #expect(machine.requestEnd() == .ignore)
        #expect(machine.requestBody() == .ignore)
        #expect(!machine.allowsRead, "the tunnel reads, not the HTTP handler")
    }

    @Test func closedIgnoresEverything() {
        var machine = ClientConnectionStateMachine()
        machine.closed()
        #expect(machine.requestHead(keepAlive: true) == .ignore)
        #expect(!machine.allowsRead)
        machine.closeAfterWrite()
        #expect(machine.state == .closed)
    }
}
