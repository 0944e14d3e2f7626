import GatewayCore
@testable import GatewayListener
import NIOCore
import Testing

/// The exchange's decisions about retries and replays, on values: no channel,
/// no loop, the retry planner a closure that counts its answers.
struct ExchangeStateMachineRetryTests {
    typealias Machine = ExchangeStateMachine

    static let reset = GatewayError(.connectionReset, "reset by the upstream")
    static func run(bodyLimit: Int = 100, maxAttempts: Int = 3) -> RetryRun {
        RetryRun(maxAttempts: maxAttempts, deadline: nil, perTryTimeout: nil, bodyLimit: bodyLimit)
    }

    /// A planner that retries after `delay` while attempts remain, counting its asks.
    final class Planner {
        var asks = 0
        let delay: Duration
        /// Retries the budget allows (nil: unbounded).
        var budget: Int?

        init(delay: Duration = .milliseconds(100), budget: Int? = nil) {
            self.delay = delay
            self.budget = budget
        }

        func decide(_ run: inout RetryRun) -> Duration? {
            asks += 1
            guard run.attempts < run.maxAttempts else { return nil }
            if let budget {
                guard budget > 0 else { return nil }
                self.budget = budget - 1
            }
            run.attempts += 1
            return delay
        }

        func afterFailure(_ error: GatewayError, _ run: inout RetryRun) -> Duration? { decide(&run) }
    }

    /// A machine whose first attempt carries a body of `declared` bytes (nil: chunked).
    static func started(declared: Int?, retry: RetryRun?, stepReplayLimit: Int? = nil) -> Machine {
        var machine = Machine()
        _ = machine.start(retry: retry, stepReplayLimit: stepReplayLimit, declaredLength: declared, bodyless: false)
        machine.attemptStarted()
        return machine
    }

    // MARK: A 401 while the body is half sent

    /// The step's replay (a token refresh) turns the 401 down: the attempt is
    /// abandoned (the connection cannot be reused), the refresh runs, and the
    /// body's copy goes once the client's whole body is in.
    @Test func a401WithTheBodyHalfSentWaitsForTheRestAfterTheRefresh() {
        var machine = Self.started(declared: 10, retry: nil, stepReplayLimit: 1024)
        let planner = Planner()
        #expect(machine.requestBodyPart(ByteBuffer(string: "hello"), retryDelay: planner.afterFailure) == .none)
        #expect(machine.resend.stepsMayReplay, "the declared body surely fits its copy")
        #expect(machine.responseHead(replayAsked: true, requestSent: false, retryDelay: planner.decide) == .abandon(then: .awaitReplay))
        #expect(machine.replayWaitEnded(failure: nil) == .awaitBody, "refreshed, but half the body is still coming")
        #expect(machine.requestBodyPart(ByteBuffer(string: "world"), retryDelay: planner.afterFailure) == .none, "not complete yet")
        #expect(machine.requestEnded(retryDelay: planner.afterFailure) == .runAttempt(from: .routedWithBody(ByteBuffer(string: "helloworld"))))
        #expect(machine.currentStep == 0, "every step runs again")
        #expect(planner.asks == 0, "a replay is not a retry")
        // One replay per request: the next 401 goes to the client.
        machine.attemptStarted()
        #expect(!machine.resend.stepsMayReplay)
        #expect(machine.responseHead(replayAsked: false, requestSent: true, retryDelay: planner.decide) == .forward)
    }

    /// The body is all in by the time the refresh ends: the replay goes at once.
    @Test func a401WithTheBodyHalfSentReplaysAtOnceWhenTheBodyCameDuringTheRefresh() {
        var machine = Self.started(declared: 10, retry: nil, stepReplayLimit: 1024)
        _ = machine.requestBodyPart(ByteBuffer(string: "hello"), retryDelay: Self.noPlanner)
        #expect(machine.responseHead(replayAsked: true, requestSent: false, retryDelay: { _ in nil }) == .abandon(then: .awaitReplay))
        #expect(machine.requestBodyPart(ByteBuffer(string: "world"), retryDelay: Self.noPlanner) == .none)
        #expect(machine.requestEnded(retryDelay: Self.noPlanner) == .none, "the refresh still runs")
        #expect(machine.replayWaitEnded(failure: nil) == .runAttempt(from: .routedWithBody(ByteBuffer(string: "helloworld"))))
    }

    /// A failed refresh is the client's answer; a chunked body may not be replayed at all.
    @Test func aFailedRefreshIsTheAnswerAndAChunkedBodyIsNotReplayed() {
        var machine = Self.started(declared: 4, retry: nil, stepReplayLimit: 1024)
        _ = machine.requestBodyPart(ByteBuffer(string: "body"), retryDelay: Self.noPlanner)
        _ = machine.requestEnded(retryDelay: Self.noPlanner)
        #expect(machine.responseHead(replayAsked: true, requestSent: true, retryDelay: { _ in nil }) == .discard)
        #expect(machine.responseEnded() == .next(.awaitReplay))
        let refusal = GatewayError(.tokenRefreshFailed, "invalid_grant")
        #expect(machine.replayWaitEnded(failure: refusal) == .fail(refusal))
        #expect(machine.failed(refusal, injectedReset: false) == .respond(status: 401))

        let chunked = Self.started(declared: nil, retry: nil, stepReplayLimit: 1024)
        #expect(!chunked.resend.stepsMayReplay, "a body of unknown length might not fit its copy")
    }

    // MARK: Retries and the body

    /// An attempt fails while a chunked body is still coming: the retry is
    /// decided (and taken from the budget) only once the body is all in.
    @Test func aRetryWhileTheBodyStillArrivesIsDecidedOnceItIsIn() {
        var machine = Self.started(declared: nil, retry: Self.run())
        let planner = Planner()
        _ = machine.requestBodyPart(ByteBuffer(string: "part1"), retryDelay: planner.afterFailure)
        #expect(machine.upstreamFailed(Self.reset, retryDelay: planner.afterFailure) == .awaitBody)
        #expect(planner.asks == 0, "not asked before the body is known to fit")
        #expect(machine.requestBodyPart(ByteBuffer(string: "part2"), retryDelay: planner.afterFailure) == .none)
        #expect(machine.requestEnded(retryDelay: planner.afterFailure) == .backOff(.milliseconds(100)))
        #expect(planner.asks == 1)
        #expect(machine.backoffEnded() == .runAttempt(from: .routedWithBody(ByteBuffer(string: "part1part2"))))
        #expect(machine.resend.retry?.attempts == 2)
    }

    /// A chunked body that outgrows `buffer_limit` cannot go again: the failure is the answer.
    @Test func aBodyThatOutgrowsItsCopyFailsWithTheAttemptsError() {
        var machine = Self.started(declared: nil, retry: Self.run(bodyLimit: 8))
        #expect(machine.upstreamFailed(Self.reset, retryDelay: Self.noPlanner) == .awaitBody)
        #expect(machine.requestBodyPart(ByteBuffer(string: "0123456789"), retryDelay: Self.noPlanner) == .fail(Self.reset))
    }

    /// A declared body that fits is retried at once; the next attempt waits for its rest.
    @Test func aDeclaredBodyIsRetriedAndTheNextAttemptWaitsForIt() {
        var machine = Self.started(declared: 6, retry: Self.run())
        let planner = Planner(delay: .zero)
        _ = machine.requestBodyPart(ByteBuffer(string: "abc"), retryDelay: planner.afterFailure)
        #expect(machine.upstreamFailed(Self.reset, retryDelay: planner.afterFailure) == .awaitBody, "no backoff: straight to the wait")
        #expect(planner.asks == 1)
        #expect(machine.requestBodyPart(ByteBuffer(string: "def"), retryDelay: planner.afterFailure) == .none)
        #expect(machine.requestEnded(retryDelay: planner.afterFailure) == .runAttempt(from: .routedWithBody(ByteBuffer(string: "abcdef"))))
    }

    /// The budget (or the attempts) run out: the last failure is the answer.
    @Test func aRetryBudgetExhaustedGivesTheFailureToTheClient() {
        var machine = Self.started(declared: 0, retry: Self.run(maxAttempts: 5))
        let planner = Planner(budget: 1)
        _ = machine.requestEnded(retryDelay: planner.afterFailure)
        #expect(machine.upstreamFailed(Self.reset, retryDelay: planner.afterFailure) == .backOff(.milliseconds(100)))
        #expect(machine.backoffEnded() == .runAttempt(from: .routedWithBody(ByteBuffer())))
        machine.attemptStarted()
        #expect(machine.upstreamFailed(Self.reset, retryDelay: planner.afterFailure) == .fail(Self.reset), "the budget is spent")
        #expect(planner.asks == 2)
        #expect(machine.resend.retry?.attempts == 2, "only the granted retry counts")
        #expect(machine.failed(Self.reset, injectedReset: false) == .respond(status: 502))
    }

    /// A 429 or 503 with `Retry-After`: the planner's wait (its reading of the
    /// header) is the backoff; the response's body is read and dropped first.
    @Test func a503WithRetryAfterIsDiscardedThenRetriedAfterItsWait() {
        var machine = Self.attempting(retry: Self.run())
        var seen: [Duration] = []
        let retryAfter = Duration.seconds(2)
        #expect(machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { run in
            run.attempts += 1
            seen.append(retryAfter)
            return retryAfter
        }) == .discard)
        #expect(seen == [retryAfter])
        #expect({ !machine.responseBodyPart(4) }())
        #expect(machine.responseEnded() == .next(.backOff(retryAfter)))
        #expect(machine.backoffEnded() == .runAttempt(from: .routed))
        #expect(machine.backoffEnded() == .none, "a second end of the same backoff changes nothing")
        // A cancel while backing off reports the backoff to withdraw.
        var backingOff = Self.attempting(retry: Self.run())
        _ = backingOff.upstreamFailed(Self.reset, retryDelay: { _, _ in .seconds(1) })
        guard case .backingOff = backingOff.cancel() else {
            Issue.record("the backoff is withdrawn")
            return
        }
        #expect(backingOff.backoffEnded() == .none)
    }

    /// A retryable status answered before the whole body went: the attempt is given up at once.
    @Test func aRetryableStatusBeforeTheWholeBodyWentAbandonsTheAttempt() {
        var machine = Self.started(declared: 4, retry: Self.run())
        _ = machine.requestBodyPart(ByteBuffer(string: "ab"), retryDelay: Self.noPlanner)
        #expect(machine.responseHead(replayAsked: false, requestSent: false, retryDelay: { _ in .zero }) == .abandon(then: .awaitBody))
        #expect(machine.requestBodyPart(ByteBuffer(string: "cd"), retryDelay: Self.noPlanner) == .none)
        #expect(machine.requestEnded(retryDelay: Self.noPlanner) == .runAttempt(from: .routedWithBody(ByteBuffer(string: "abcd"))))
    }

    // MARK: After the response started

    /// Response bytes went to the client: a failure is never retried, the response is cut short.
    @Test func aFailureAfterResponseBytesWentIsNotRetried() {
        var machine = Self.attempting(retry: Self.run())
        #expect(machine.responseHead(replayAsked: false, requestSent: true, retryDelay: { _ in nil }) == .forward)
        machine.responding(status: 200, bodyless: false)
        #expect({ machine.responseBodyPart(100) }())
        #expect(machine.upstreamFailed(Self.reset, retryDelay: Self.noPlanner) == .fail(Self.reset))
        #expect(machine.failed(Self.reset, injectedReset: false) == .abort)
        #expect(machine.status == 200 && machine.bytesOut == 100, "the outcome is what the client got")
        #expect(machine.resend.copy == nil)
    }

    /// A failure the planner does not know (not a gateway error) is not retried.
    @Test func anUnknownFailureIsAnInternalError() {
        struct Odd: Error {}
        var machine = Self.attempting(retry: Self.run())
        guard case .fail(let error) = machine.upstreamFailed(Odd(), retryDelay: Self.noPlanner) else {
            Issue.record("an unknown failure fails the exchange")
            return
        }
        #expect(error.code == .internalError)
    }

    static func attempting(retry: RetryRun?) -> Machine {
        var machine = Machine()
        _ = machine.start(retry: retry, stepReplayLimit: nil, declaredLength: 0, bodyless: true)
        machine.attemptStarted()
        return machine
    }

    static func noPlanner(_ error: GatewayError, _ run: inout RetryRun) -> Duration? {
        Issue.record("the planner was asked after \(error.code)")
        return nil
    }
}
