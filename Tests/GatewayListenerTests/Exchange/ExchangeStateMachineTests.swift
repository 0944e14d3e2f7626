import GatewayCore
@testable import GatewayListener
import NIOCore
import Testing

/// The exchange's progress on values: every phase and what each event makes of it.
struct ExchangeStateMachineTests {
    typealias Machine = ExchangeStateMachine

    /// No planner: a test where none may be asked.
    static func noRetry(_ error: GatewayError, _ run: inout RetryRun) -> Duration? {
        Issue.record("the planner was asked after \(error.code)")
        return nil
    }

    /// A machine started on a bodyless request with no retry and `steps` steps proceeded, its attempt in flight.
    static func attempting(retry: RetryRun? = nil) -> Machine {
        var machine = Machine()
        #expect(machine.start(retry: retry, stepReplayLimit: nil, declaredLength: 0, bodyless: true) == .runSteps)
        machine.attemptStarted()
        return machine
    }

    @Test func stepsRunInOrderAndAWaitResumesAtItsStep() {
        var machine = Machine()
        #expect(machine.currentStep == nil, "nothing runs before the start")
        #expect(machine.start(retry: nil, stepReplayLimit: nil, declaredLength: 0, bodyless: true) == .runSteps)
        #expect(machine.currentStep == 0)
        machine.stepProceeded()
        #expect(machine.currentStep == 1)
        machine.stepWaits()
        #expect(machine.currentStep == nil)
        // A step that waited for a condition runs again; one that waited for its result is done.
        #expect(machine.stepWaitEnded(failure: nil, repeatStep: true) == .runSteps)
        #expect(machine.currentStep == 1)
        machine.stepWaits()
        #expect(machine.stepWaitEnded(failure: nil, repeatStep: false) == .runSteps)
        #expect(machine.currentStep == 2)
        // A failed wait is the answer; a wait's outcome after the exchange was cancelled is dropped.
        machine.stepWaits()
        #expect(machine.stepWaitEnded(failure: GatewayError(.tokenRefreshFailed, "no token"), repeatStep: false) == .fail(GatewayError(.tokenRefreshFailed, "no token")))
        guard case .waiting = machine.cancel() else {
            Issue.record("the cancel reports the wait to withdraw")
            return
        }
        #expect(machine.stepWaitEnded(failure: nil, repeatStep: false) == .none)
        #expect(machine.cancel() == nil)
    }

    @Test func aResponseStreamsThenFinishes() {
        var machine = Self.attempting()
        #expect(machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in nil }) == .forward)
        machine.responding(status: 200, bodyless: false)
        #expect({ machine.takeUnflushed() }())  // the head goes out with the first read
        #expect({ !machine.takeUnflushed() }())
        #expect({ machine.responseBodyPart(5) }())
        #expect({ machine.responseBodyPart(7) }())
        #expect({ machine.takeUnflushed() }())
        #expect(machine.bytesOut == 12)
        #expect(machine.responseEnded() == .finish)
        #expect(machine.isFinished && machine.status == 200)
        // Nothing counts after the end; a second end is ignored; a late failure changes nothing.
        #expect({ !machine.responseBodyPart(1) }())
        #expect(machine.responseEnded() == .ignore)
        #expect(machine.upstreamFailed(GatewayError(.connectionReset, "late"), retryDelay: Self.noRetry) == .none)
        #expect(machine.failed(GatewayError(.connectionReset, "late"), injectedReset: false) == nil)
    }

    @Test func aBodylessResponseWritesNoBodyParts() {
        var machine = Self.attempting()
        _ = machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in nil })
        machine.responding(status: 304, bodyless: true)
        #expect({ !machine.responseBodyPart(10) }())
        #expect(machine.bytesOut == 0)
    }

    @Test func aFailureBeforeTheHeadIsAnsweredWithItsStatus() {
        var machine = Self.attempting()
        let error = GatewayError(.connectFailed, "refused")
        #expect(machine.upstreamFailed(error, retryDelay: Self.noRetry) == .fail(error), "no retry run: the failure is the answer")
        #expect(machine.failed(error, injectedReset: false) == .respond(status: 502))
        #expect(machine.isFinished && machine.status == 502)
        // A fault toward the app that resets the connection answers nothing.
        var reset = Self.attempting()
        #expect(reset.failed(GatewayError(.connectionReset, "injected"), injectedReset: true) == .abort)
        #expect(reset.status == nil)
    }

    @Test func aStepAnswersLocally() {
        var machine = Machine()
        _ = machine.start(retry: nil, stepReplayLimit: nil, declaredLength: 0, bodyless: true)
        machine.answeredLocally(status: 429)
        #expect(machine.isFinished && machine.status == 429)
        #expect(machine.cancel() == nil, "a finished exchange stays finished")
    }

    @Test func continueGoesOnceAndNeverAfterAResponseStarted() {
        var machine = Self.attempting()
        #expect({ !machine.continueNeeded(expected: false) }())
        #expect({ machine.continueNeeded(expected: true) }())
        #expect({ !machine.continueNeeded(expected: true) }())
        var responding = Self.attempting()
        _ = responding.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in nil })
        responding.responding(status: 200, bodyless: false)
        #expect({ !responding.continueNeeded(expected: true) }())
    }

    @Test func anUpgradeEndsOnlyAnAttempt() {
        var idle = Machine()
        #expect({ !idle.upgraded(status: 101) }())
        var machine = Self.attempting()
        #expect({ machine.upgraded(status: 101) }())
        #expect(machine.isFinished && machine.status == 101)
        #expect({ !machine.upgraded(status: 101) }())
    }

    @Test func requestBytesAreCountedAndABodyThatGoesOnceIsNotCopied() {
        var machine = Machine()
        _ = machine.start(retry: nil, stepReplayLimit: nil, declaredLength: 7, bodyless: false)
        #expect(machine.requestBodyPart(ByteBuffer(string: "abc"), retryDelay: Self.noRetry) == .none)
        #expect(machine.requestBodyPart(ByteBuffer(string: "defg"), retryDelay: Self.noRetry) == .none)
        #expect(machine.bytesIn == 7)
        #expect(machine.resend.copy == nil && !machine.resend.mayAttemptAgain)
    }

    @Test func theUpstreamWaitsForASlowClientButNotWhileAResponseIsDropped() {
        var machine = Self.attempting(retry: RetryRun(maxAttempts: 2, deadline: nil, perTryTimeout: nil))
        #expect(machine.pausesUpstream(clientWritable: false))
        #expect(!machine.pausesUpstream(clientWritable: true))
        #expect(machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in .seconds(1) }) == .discard)
        #expect({ !machine.responseBodyPart(3) }(), "dropped, not counted")
        #expect(!machine.pausesUpstream(clientWritable: false))
    }

    /// A response head with no attempt in flight is a bug in the exchange: the process stops.
    @Test func aResponseHeadWithNoAttemptStops() async {
        await #expect(processExitsWith: .failure) {
            var machine = ExchangeStateMachine()
            _ = machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in nil })
        }
    }
}
