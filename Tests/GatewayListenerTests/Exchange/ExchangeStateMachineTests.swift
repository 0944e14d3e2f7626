import GatewayCore
@testable import GatewayListener
import Testing

/// The exchange's progress on values: every phase and what each event makes of it.
struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    @Test func stepsRunInOrderAndAWaitResumesAtItsStep() {
        var machine = Machine()
        #expect(machine.currentStep == 0)
        machine.stepProceeded()
        #expect(machine.currentStep == 1)
        machine.stepWaits()
        #expect(machine.currentStep == nil)
        // A step that waited for a condition runs again; one that waited for its result is done.
        #expect({ machine.waitEnded(repeatStep: true) }())
        #expect(machine.currentStep == 1)
        machine.stepWaits()
        #expect({ machine.waitEnded(repeatStep: false) }())
        #expect(machine.currentStep == 2)
        // A wait's outcome after the exchange stopped waiting is dropped.
        machine.stepWaits()
        _ = machine.abandon()
        #expect({ !machine.waitEnded(repeatStep: false) }())
    }

    @Test func aResponseStreamsThenFinishes() {
        var machine = Machine()
        machine.attemptStarted()
        #expect(machine.isAttempting)
        machine.responding(status: 200, bodyless: false)
        #expect({ machine.takeUnflushed() }())  // the head goes out with the first read
        #expect({ !machine.takeUnflushed() }())
        #expect({ machine.responseBodyPart(5) }())
        #expect({ machine.responseBodyPart(7) }())
        #expect({ machine.takeUnflushed() }())
        #expect(machine.bytesOut == 12)
        #expect({ machine.responseEnded() == .finish }())
        #expect(machine.isFinished)
        #expect(machine.status == 200)
        // Nothing counts after the end; a second end is ignored.
        #expect({ !machine.responseBodyPart(1) }())
        #expect({ machine.responseEnded() == .ignore }())
        #expect({ !machine.finish() }())
    }

    @Test func aBodylessResponseWritesNoBodyParts() {
        var machine = Machine()
        machine.attemptStarted()
        machine.responding(status: 304, bodyless: true)
        #expect({ !machine.responseBodyPart(10) }())
        #expect(machine.bytesOut == 0)
    }

    /// A turned-down response is discarded when the whole request went, else
    /// its attempt is given up at once; a step's turn-down is remembered (one replay per request).
    @Test func turnedDownResponsesDiscardOrAbandon() {
        var sent = Machine()
        sent.attemptStarted()
        #expect({ sent.responseTurnedDown(next: .after(.seconds(1)), requestSent: true, byStep: false) == .discard }())
        #expect({ !sent.responseBodyPart(3) }())  // dropped, not counted
        #expect(sent.pausesUpstream(clientWritable: false) == false)
        #expect({ sent.responseEnded() == .startNext(.after(.seconds(1))) }())
        #expect(!sent.replayedByStep)

        var partial = Machine()
        partial.attemptStarted()
        #expect({ partial.responseTurnedDown(next: .replay, requestSent: false, byStep: true) == .abandonAndStartNext(.replay) }())
        #expect(partial.replayedByStep)
    }

    @Test func upstreamFailuresByPhase() {
        var machine = Machine()
        #expect(machine.upstreamFailed() == .ignore)
        machine.attemptStarted()
        #expect(machine.upstreamFailed() == .attemptFailed)
        _ = machine.responseTurnedDown(next: .replay, requestSent: true, byStep: true)
        #expect(machine.upstreamFailed() == .startNext(.replay))
        machine.restartSteps()
        machine.attemptStarted()
        machine.responding(status: 200, bodyless: false)
        #expect(machine.upstreamFailed() == .fail)
        #expect(machine.pausesUpstream(clientWritable: false))
        #expect(!machine.pausesUpstream(clientWritable: true))
    }

    @Test func backoffAndBodyWaits() {
        var machine = Machine()
        machine.backingOff()
        #expect({ machine.backoffEnded() }())
        machine.awaitBody(within: 1024)
        #expect({ !machine.backoffEnded() }())
        guard case .restartAttempts(within: 1024) = machine.bodyArrived() else {
            Issue.record("a body wait restarts the attempts")
            return
        }
        machine.awaitBodyToRetry(after: GatewayError(.connectionReset, "reset"))
        guard case .decideRetry(let error) = machine.bodyArrived() else {
            Issue.record("a failed attempt's body wait decides the retry")
            return
        }
        #expect(error.code == .connectionReset)
        machine.restartSteps()
        guard case .none = machine.bodyArrived() else {
            Issue.record("no wait, nothing to do")
            return
        }
    }

    @Test func continueGoesOnceAndNeverAfterAResponseStarted() {
        var machine = Machine()
        #expect({ !machine.continueNeeded(expected: false, responseStarted: false) }())
        #expect({ !machine.continueNeeded(expected: true, responseStarted: true) }())
        #expect({ machine.continueNeeded(expected: true, responseStarted: false) }())
        #expect({ !machine.continueNeeded(expected: true, responseStarted: false) }())
    }

    @Test func anUpgradeEndsOnlyAnAttempt() {
        var idle = Machine()
        #expect({ !idle.upgraded(status: 101) }())
        var machine = Machine()
        machine.attemptStarted()
        #expect({ machine.upgraded(status: 101) }())
        #expect(machine.isFinished && machine.status == 101)
        #expect({ !machine.upgraded(status: 101) }())
    }

    @Test func abandonReportsWhatWasPendingAndKeepsAFinishedExchangeFinished() {
        var waiting = Machine()
        waiting.stepWaits()
        guard case .waiting = waiting.abandon() else {
            Issue.record("the wait is reported")
            return
        }
        #expect(waiting.currentStep == 0)
        var done = Machine()
        done.answeredLocally(status: 429)
        _ = done.abandon()
        #expect(done.isFinished && done.status == 429)
    }

    @Test func requestBytesAreCounted() {
        var machine = Machine()
        machine.requestBodyReceived(3)
        machine.requestBodyReceived(4)
        #expect(machine.bytesIn == 7)
    }
}
