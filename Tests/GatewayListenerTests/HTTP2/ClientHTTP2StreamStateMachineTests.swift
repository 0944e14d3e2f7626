@testable import GatewayListener
import Testing

/// An intercepted client's HTTP/2 stream on values: the request's HEADERS,
/// body and END_STREAM, held reads, the response's HEADERS and END_STREAM,
/// and what a timeout does at each point.
struct ClientHTTP2StreamStateMachineTests {
    typealias Machine = ClientHTTP2StreamStateMachine

    @Test func theFirstHeadersStartTheExchangeAndTrailersEndTheBody() {
        var machine = Machine()
        #expect(machine.headersReceived(endStream: false) == .start(endStream: false))
        #expect(machine.headersReceived(endStream: false) == .ignore, "HEADERS without END_STREAM in the body: nothing to do")
        #expect(machine.headersReceived(endStream: true) == .endRequest)
        #expect({ machine.requestEnded() }())
        #expect({ !machine.requestEnded() }(), "the exchange is told once")
        #expect(machine.headersReceived(endStream: true) == .ignore)
        #expect(machine.request == .ended)
    }

    @Test func aBodylessRequestStartsWithItsEnd() {
        var machine = Machine()
        #expect(machine.headersReceived(endStream: true) == .start(endStream: true))
        #expect({ machine.requestEnded() }())
        #expect(machine.request == .ended)
    }

    @Test func aHeldReadStopsTheClockOnceAndGoesWithTheDemand() {
        var machine = Machine()
        #expect(machine.read(mayRead: true) == .read)
        #expect(machine.read(mayRead: false) == .hold(first: true))
        #expect(machine.read(mayRead: false) == .hold(first: false), "held already")
        #expect({ !machine.demand(mayRead: false) }(), "the exchange still takes nothing")
        #expect({ machine.demand(mayRead: true) }())
        #expect(!machine.readHeld)
        #expect({ !machine.demand(mayRead: true) }(), "no read held: nothing to release")
    }

    @Test func aResponseStreamsThenEndsOnce() {
        var machine = Machine()
        _ = machine.headersReceived(endStream: true)
        #expect(!machine.headSent && !machine.writesBody)
        machine.headWritten(endStream: false)
        #expect(machine.headSent && machine.writesBody && !machine.responseEnded)
        #expect({ machine.responseEnd() }())
        #expect({ !machine.responseEnd() }(), "END_STREAM went already")
        #expect(machine.responseEnded && !machine.writesBody)
    }

    @Test func aBodylessHeadEndsTheStream() {
        var machine = Machine()
        machine.headWritten(endStream: true)
        #expect(machine.responseEnded)
        #expect({ !machine.responseEnd() }(), "only a flush is left")
    }

    /// A body timeout before the head is answered (408); a send timeout, or
    /// any timeout after the head, resets the stream.
    @Test(arguments: [(false, false, Machine.Timeout.respond), (true, false, .reset), (false, true, .reset), (true, true, .reset)])
    func timeouts(sendTimeout: Bool, headSent: Bool, expected: Machine.Timeout) {
        var machine = Machine()
        _ = machine.headersReceived(endStream: false)
        if headSent { machine.headWritten(endStream: false) }
        #expect(machine.timedOut(sendTimeout: sendTimeout) == expected)
        #expect(machine.responseEnded == (expected == .reset))
    }

    @Test func aClosedStreamWritesNothingMore() {
        var machine = Machine()
        _ = machine.headersReceived(endStream: false)
        machine.headWritten(endStream: false)
        machine.closed()
        #expect(!machine.writesBody && machine.headSent)
        #expect({ !machine.responseEnd() }())
    }
}
