@testable import GatewayListener
import NIOCore
import Testing

/// The request body's way upstream as a pure value: order, one write in
/// flight, the last part flagged at the declared length, the end of a chunked
/// body written once, and when the client's reads may go on.
struct RequestBodyForwardingTests {
    static func part(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    @Test func partsGoInOrderOneWriteAtATimeTheLastFlaggedAtTheDeclaredLength() {
        var body = RequestBodyForwarding(declaredLength: 6, bodyless: false)
        #expect(body.nextWrite(writerReady: false) == nil, "nothing before the upstream can take it")
        body.received(Self.part("abc"))
        body.received(Self.part("def"))
        #expect(!body.wantsMore(writerReady: false), "reads held while parts wait")
        #expect(body.nextWrite(writerReady: true) == .part(Self.part("abc"), isLast: false))
        #expect(body.nextWrite(writerReady: true) == nil, "one write in flight")
        body.writeCompleted()
        #expect(body.nextWrite(writerReady: true) == .part(Self.part("def"), isLast: true))
        #expect(body.endSent)
        body.writeCompleted()
        body.ended()
        #expect(body.nextWrite(writerReady: true) == nil, "a body of known length needs no separate end")
        #expect(body.sent == 6)
    }

    @Test func aChunkedBodyEndsWithOneEndWrite() {
        var body = RequestBodyForwarding(declaredLength: nil, bodyless: false)
        body.received(Self.part("x"))
        #expect(body.nextWrite(writerReady: true) == .part(Self.part("x"), isLast: false))
        body.ended()
        #expect(body.nextWrite(writerReady: true) == nil, "the end waits for the write in flight")
        body.writeCompleted()
        #expect(body.nextWrite(writerReady: true) == .end)
        body.writeCompleted()
        #expect(body.nextWrite(writerReady: true) == nil, "the end is written once")
        #expect(body.endSent)
    }

    @Test func aBodilessRequestWritesNothing() {
        var body = RequestBodyForwarding(declaredLength: 0, bodyless: true)
        body.ended()
        #expect(body.endSent)
        #expect(body.nextWrite(writerReady: true) == nil)
        #expect(body.wantsMore(writerReady: false), "the whole request is in: the next one may be read")
    }

    @Test func readsGoOnOnceTheUpstreamTookEverything() {
        var body = RequestBodyForwarding(declaredLength: 10, bodyless: false)
        #expect(!body.wantsMore(writerReady: false), "no upstream yet: hold")
        #expect(body.wantsMore(writerReady: true))
        body.received(Self.part("12345"))
        _ = body.nextWrite(writerReady: true)
        #expect(!body.wantsMore(writerReady: true), "a write in flight: hold")
        body.writeCompleted()
        #expect(body.wantsMore(writerReady: true))
    }

    @Test func aDetachedBodyDropsWhatIsPendingAndWritesNothingMore() {
        var body = RequestBodyForwarding(declaredLength: 10, bodyless: false)
        body.received(Self.part("12"))
        #expect(body.nextWrite(writerReady: true) == .part(Self.part("12"), isLast: false))
        body.received(Self.part("34"))
        body.detach()
        #expect(body.endSent && body.detached)
        #expect(body.wantsMore(writerReady: false), "the rest goes to the body's copy: reads go on")
        body.writeCompleted()  // the given-up attempt's write completes late
        body.received(Self.part("567890"))
        body.ended()
        #expect(body.nextWrite(writerReady: true) == nil)
        #expect(body.sent == 2)
    }
}
