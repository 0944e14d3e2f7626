@testable import GatewayListener
import Testing

/// One side of a blind tunnel as a pure value.
struct TunnelStateMachineTests {
    @Test func readsGoOutOnlyWhileThePeerIsWritable() {
        var side = TunnelStateMachine()
        #expect(side.readRequested(peerWritable: true) == .read)
        #expect(side.readRequested(peerWritable: false) == .hold)
        #expect(side.readPending)
        #expect(side.peerBecameWritable() == .read)
        #expect(side.peerBecameWritable() == .ignore, "one held read, one release")
    }

    @Test func bytesAreCountedAndForwardedUntilClosed() {
        var side = TunnelStateMachine()
        let first = side.bytesArrived(10)
        let second = side.bytesArrived(5)
        #expect(first && second)
        #expect(side.bytesRead == 15)
        #expect(side.closed() == .closeBoth)
        let afterClose = side.bytesArrived(1)
        #expect(!afterClose, "nothing is forwarded after the close")
        #expect(side.bytesRead == 15)
    }

    @Test func anEOFHalfClosesOnceAndTheOtherDirectionGoesOn() {
        var side = TunnelStateMachine()
        #expect(side.inputClosed() == .shutdownPeerOutput)
        #expect(side.state == .inputClosed)
        #expect(side.inputClosed() == .none)
        #expect(side.readRequested(peerWritable: true) == .read)
        #expect(side.closed() == .closeBoth)
        #expect(side.closed() == .none, "closing twice does nothing")
        #expect(side.readRequested(peerWritable: true) == .ignore)
    }
}
