import GatewayCore
import NIOCore
import NIOEmbedded
import Testing

/// The pieces an HTTP/2 connection's handler drives its streams with: the
/// send window a stream's writer sees, the read batch, the flush per read or tick.
struct HTTP2FlowTests {
    @Test func aStreamHasRoomWhileItsWindowLessWhatIsBufferedIsOpen() {
        var window = HTTP2SendWindow(initial: 10_000)
        window.wrote(6_000)
        #expect(window.hasRoom)
        window.reported(4_000)  // 6,000 went out
        #expect(window.unsent == 0 && window.hasRoom)
        window.wrote(4_000)
        #expect(!window.hasRoom, "the window is spent on what is still buffered")
        window.reported(9_000)  // a WINDOW_UPDATE: nothing more went out
        #expect(window.unsent == 4_000 && window.hasRoom)
    }

    @Test func aStreamBuffersAtMostMaxUnsentWhenTheConnectionWindowIsTheClosedOne() {
        var window = HTTP2SendWindow(initial: 1 << 20)
        window.wrote(HTTP2SendWindow.maxUnsent)
        #expect(!window.hasRoom)
    }

    @Test func theInitialWindowCountsOnlyBeforeAReport() {
        var window = HTTP2SendWindow()
        window.reported(100)
        window.opened(initial: 1 << 20)
        #expect(window.window == 100)
    }

    final class Member: HTTP2ReadBatchMember {
        var inReadBatch = false
        var completes = 0
        var onComplete: (() -> Void)?
        func readComplete() {
            completes += 1
            onComplete?()
        }
    }

    /// A declared length takes DATA up to it and may end only once all came;
    /// without one, any body goes.
    @Test func aDeclaredLengthIsTheBodysLengthExactly() {
        var five = HTTP2DeclaredLength(5)
        #expect(!five.mayEnd)
        let firstParts = five.received(2) && five.received(0)
        #expect(firstParts && !five.mayEnd)
        let rest = five.received(3)
        #expect(rest && five.mayEnd)
        let beyond = five.received(1)
        #expect(!beyond, "a byte beyond it")
        var three = HTTP2DeclaredLength(3)
        let tooLong = three.received(4)
        #expect(!tooLong)
        var none = HTTP2DeclaredLength(nil)
        let anything = none.received(1 << 20)
        #expect(anything && none.mayEnd)
        #expect(HTTP2DeclaredLength(0).mayEnd)
    }

    @Test func eachMemberHearsTheReadsEndOnceEvenOneThatJoinsMeanwhile() {
        let io = HTTP2StreamIO<Member>()
        let first = Member(), late = Member()
        #expect(!io.join(first), "outside a read: the member ends its read itself")
        io.readStarted()
        #expect(io.join(first))
        #expect(io.join(first))
        first.onComplete = { _ = io.join(late) }
        io.readEnded()
        #expect(first.completes == 1 && late.completes == 1)
        #expect(!first.inReadBatch && !late.inReadBatch)
    }

    final class FlushCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var flushes = 0
        func flush(context: ChannelHandlerContext) {
            flushes += 1
            context.flush()
        }
    }

    @Test func writesOfOneTickShareOneFlushAndAReadsWritesFlushAtItsEnd() throws {
        let channel = EmbeddedChannel()
        let counter = FlushCounter()
        final class Writer: ChannelInboundHandler { typealias InboundIn = Any }
        let writer = Writer()
        try channel.pipeline.syncOperations.addHandlers([counter, writer])
        let flusher = HTTP2StreamIO<Member>()
        flusher.attach(try channel.pipeline.syncOperations.context(handler: writer))
        flusher.flushSoon()
        flusher.flushSoon()
        #expect(counter.flushes == 0)
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1)
        flusher.readStarted()
        flusher.flushSoon()
        channel.embeddedEventLoop.run()
        #expect(counter.flushes == 1, "inside a read the flush waits for its end")
        flusher.readEnded()
        #expect(counter.flushes == 2)
        flusher.detach()
    }
}
