@testable import GatewayListener
import NIOCore
import Testing

/// The client connection's timers as pure values: head, idle, body pauses
/// (not while the gateway holds reads) and unread responses, one timer for all.
struct ClientTimeoutStateMachineTests {
    static let limits = ClientTimeoutStateMachine.Limits(header: .seconds(10), idle: .seconds(60), body: .seconds(5), send: .seconds(7))
    let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000_000)

    func at(_ seconds: Int64) -> NIODeadline { t0 + .seconds(seconds) }

    @Test func anIdleConnectionIsClosedQuietlyAfterIdleTimeout() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        #expect(machine.connected(now: t0) == .armTimer(at(10)), "due within a header timeout")
        #expect(machine.timerFired(now: at(10)) == .armTimer(at(60)))
        #expect(machine.timerFired(now: at(60)) == .closeIdle)
    }

    @Test func aHeadMustArriveWithinTheHeaderTimeout() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.connected(now: t0)
        #expect(machine.bytesRead(now: at(1)) == .armTimer(at(11)))
        #expect(machine.bytesRead(now: at(2)) == .none, "the first byte starts it")
        #expect(machine.timerFired(now: at(10)) == .armTimer(at(11)))
        #expect(machine.timerFired(now: at(11)) == .expired(.head))
    }

    @Test func aBodylessRequestArmsNothing() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.connected(now: t0)
        _ = machine.bytesRead(now: at(1))
        #expect(machine.headReceived(bodyFollows: false, now: at(1)) == .none)
        #expect(machine.timerFired(now: at(11)) == .none, "nothing is due during the exchange")
        #expect(machine.exchangeFinished(now: at(20)) == .armTimer(at(30)))
    }

    @Test func aBodyPauseLongerThanBodyTimeoutExpires() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.bytesRead(now: t0)
        #expect(machine.headReceived(bodyFollows: true, now: t0) == .armTimer(at(5)))
        #expect(machine.bytesRead(now: at(3)) == .none, "each read pushes the deadline")
        #expect(machine.timerFired(now: at(5)) == .armTimer(at(8)))
        #expect(machine.timerFired(now: at(8)) == .expired(.body))
    }

    @Test func aBodyThatEndsStopsTheBodyTimer() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.headReceived(bodyFollows: true, now: t0)
        machine.requestEnded()
        #expect(machine.timerFired(now: at(5)) == .none)
    }

    @Test func heldReadsAreNotTheClientsPause() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.headReceived(bodyFollows: true, now: t0)
        #expect(machine.readsHeld(true, now: at(1)) == .none)
        #expect(machine.timerFired(now: at(30)) == .none, "the upstream was slow, not the client")
        #expect(machine.readsHeld(false, now: at(30)) == .armTimer(at(35)))
        #expect(machine.timerFired(now: at(35)) == .expired(.body))
    }

    @Test func aResponseTheClientDoesNotReadExpiresAfterSendTimeout() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.headReceived(bodyFollows: false, now: t0)
        #expect(machine.writabilityChanged(writable: false, now: at(1)) == .armTimer(at(8)))
        #expect(machine.writabilityChanged(writable: false, now: at(2)) == .none)
        #expect(machine.timerFired(now: at(8)) == .expired(.send))
    }

    @Test func aClientThatReadsAgainIsNotTimedOut() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.headReceived(bodyFollows: false, now: t0)
        _ = machine.writabilityChanged(writable: false, now: at(1))
        #expect(machine.writabilityChanged(writable: true, now: at(3)) == .none)
        #expect(machine.timerFired(now: at(8)) == .none)
    }

    @Test func stoppedMachinesHaveNothingDue() {
        var machine = ClientTimeoutStateMachine(limits: Self.limits)
        _ = machine.connected(now: t0)
        _ = machine.bytesRead(now: t0)
        machine.stopped()
        #expect(machine.nextDeadline == nil)
        #expect(machine.timerFired(now: at(100)) == .none)
    }
}
