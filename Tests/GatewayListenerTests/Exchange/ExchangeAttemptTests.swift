import GatewayCore
@testable import GatewayListener
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Synchronization
import Testing

/// The exchange's policy hooks on an `EmbeddedChannel` with a scripted
/// upstream: steps that answer or wait, retries after a status or a per-try
/// timeout, and late callbacks of an abandoned attempt. No socket, no task.
struct ExchangeAttemptTests {
    static func harness(steps: [any AttemptStep] = [], retry: (any RetryPlanner)? = nil) throws -> ClientConnectionHarness {
        let route = UpstreamRoute(observers: [], steps: steps, retry: retry)
        return try ClientConnectionHarness(routes: RouteTable(byUpstream: [:], unconfigured: route))
    }

    static let get = "GET http://example.test/a HTTP/1.1\r\nHost: example.test\r\n\r\n"

    @Test func aStepThatAnswersSendsNoAttemptAndKeepsTheConnection() throws {
        let step = RecordingStep(decide: { _ in .respond(GatewayError(.localRateLimit, "slow down").response()) })
        let harness = try Self.harness(steps: [step])
        try harness.send(Self.get)
        #expect(harness.transport.attempts.isEmpty)
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 429 "))
        #expect(response.lowercased().contains("x-gateway-error: local_rate_limit"))
        #expect(harness.channel.isActive)
    }

    @Test func aWaitingStepHoldsTheAttemptUntilItsFutureCompletes() throws {
        let loop = EmbeddedEventLoop()
        let promise = loop.makePromise(of: Void.self)
        let step = RecordingStep(decide: { _ in .wait(AttemptWait(future: promise.futureResult, repeatStep: false, cancel: {})) })
        let waiting = try Self.harness(steps: [step, HeaderStep()])
        try waiting.send(Self.get)
        #expect(waiting.transport.attempts.isEmpty, "nothing is sent while the step waits")
        promise.succeed()
        loop.run()
        #expect(waiting.transport.attempts.count == 1)
        #expect(step.calls == 1, "a wait without repeatStep finishes the step")
        #expect(waiting.transport.attempts.first?.request.headers.first(name: "x-step") == "1", "the next step ran")
        waiting.answer(body: "ok")
        #expect(try waiting.received().hasSuffix("ok"))
    }

    @Test func aRepeatedStepRunsAgainAfterItsWait() throws {
        let calls = NIOLockedValueBox(0)
        let loop = EmbeddedEventLoop()
        let promise = loop.makePromise(of: Void.self)
        let step = RecordingStep(decide: { _ in
            let call = calls.withLockedValue { $0 += 1; return $0 }
            return call == 1 ? .wait(AttemptWait(future: promise.futureResult, repeatStep: true, cancel: {})) : .proceed
        })
        let harness = try Self.harness(steps: [step])
        try harness.send(Self.get)
        promise.succeed()
        loop.run()
        #expect(calls.withLockedValue { $0 } == 2)
        #expect(harness.transport.attempts.count == 1)
    }

    @Test func aClientLeavingDuringAWaitWithdrawsIt() throws {
        let withdrawn = NIOLockedValueBox(false)
        let loop = EmbeddedEventLoop()
        let promise = loop.makePromise(of: Void.self)
        let step = RecordingStep(decide: { _ in
            .wait(AttemptWait(future: promise.futureResult, repeatStep: false, cancel: { withdrawn.withLockedValue { $0 = true } }))
        })
        let harness = try Self.harness(steps: [step])
        try harness.send(Self.get)
        try harness.channel.close().wait()
        #expect(withdrawn.withLockedValue { $0 })
        promise.succeed()
        loop.run()
        #expect(harness.transport.attempts.isEmpty, "a withdrawn request is never sent")
    }

    @Test func aRetryableStatusIsDiscardedAndTheNextAttemptAnswers() throws {
        let step = RecordingStep(decide: { _ in .proceed })
        let harness = try Self.harness(steps: [step], retry: ScriptedRetryPlanner(statusDelay: .milliseconds(10)))
        try harness.send(Self.get)
        harness.answer(status: .serviceUnavailable, body: "busy")
        #expect(try harness.received().isEmpty, "nothing of the 503 reaches the client")
        #expect(harness.transport.attempts.count == 1, "the backoff runs first")
        harness.channel.embeddedEventLoop.advanceTime(by: .milliseconds(10))
        #expect(harness.transport.attempts.count == 2)
        #expect(step.calls == 2, "every attempt runs the steps again")
        #expect(step.heads == 1, "steps saw the discarded response's head")
        harness.answer(body: "fine")
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 200 OK"))
        #expect(response.hasSuffix("fine"))
        #expect(!response.contains("busy"))
    }

    @Test func aPerTryTimeoutAbandonsTheAttemptAndItsLateAnswerIsIgnored() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(perTryTimeout: .seconds(1)))
        try harness.send(Self.get)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(harness.transport.attempts.count == 2)
        #expect(harness.transport.attempts.first?.cancelled == true)
        // The first attempt answers late: nothing of it reaches the client.
        let first = try #require(harness.transport.attempts.first)
        first.delegate?.upstreamResponseHead(UpstreamResponseHead(status: .ok, headers: ["Content-Length": "4"], declaredLength: 4, hasBody: true))
        first.delegate?.upstreamResponseBodyPart(ByteBuffer(string: "late"))
        first.delegate?.upstreamResponseEnd()
        #expect(try harness.received().isEmpty)
        harness.answer(body: "second")
        let response = try harness.received()
        #expect(response.hasSuffix("second"))
        #expect(!response.contains("late"))
    }

    @Test func aStepsWaitDoesNotCountAgainstPerTryTimeout() throws {
        let loop = EmbeddedEventLoop()
        let slot = loop.makePromise(of: Void.self)
        let queued = RecordingStep(decide: { _ in .wait(AttemptWait(future: slot.futureResult, repeatStep: false, cancel: {})) })
        let harness = try Self.harness(steps: [queued], retry: ScriptedRetryPlanner(perTryTimeout: .seconds(1), maxAttempts: 1))
        try harness.send(Self.get)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        #expect(try harness.received().isEmpty, "a queue slot may take longer than per_try_timeout")
        slot.succeed()
        loop.run()
        #expect(harness.transport.attempts.count == 1, "the attempt's clock starts when it is sent")
        harness.answer(body: "ok")
        #expect(try harness.received().hasPrefix("HTTP/1.1 200 OK"))
    }

    @Test func aClientLeavingDuringTheBackoffStopsTheRetries() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(statusDelay: .seconds(10), maxAttempts: 5))
        try harness.send(Self.get)
        harness.answer(status: .serviceUnavailable, body: "busy")
        try harness.channel.close().wait()
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(100))
        #expect(harness.transport.attempts.count == 1)
    }

    @Test func withoutRetriesLeftTheTimeoutReachesTheClientAs504() throws {
        let harness = try Self.harness(retry: ScriptedRetryPlanner(perTryTimeout: .seconds(1), maxAttempts: 1))
        try harness.send(Self.get)
        harness.channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        let response = try harness.received()
        #expect(response.hasPrefix("HTTP/1.1 504 "), "\(response)")
        #expect(response.lowercased().contains("x-gateway-error: request_timeout"))
    }
}

/// A step whose decision the test scripts; counts its calls and the response heads it sees.
final class RecordingStep: AttemptStep, @unchecked Sendable {
    private let decide: @Sendable (ProxyRequest) -> AttemptStepDecision
    private(set) var calls = 0
    private(set) var heads = 0

    init(decide: @escaping @Sendable (ProxyRequest) -> AttemptStepDecision) {
        self.decide = decide
    }

    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        calls += 1
        return decide(request)
    }

    func responseHead(_ head: UpstreamResponseHead, of request: ProxyRequest, context: RequestContext, mayReplay: Bool, on eventLoop: any EventLoop) -> AttemptResponseVerdict {
        heads += 1
        return .accept
    }
}

/// Marks the request, to show a step ran.
struct HeaderStep: AttemptStep {
    func prepare(_ request: inout ProxyRequest, context: RequestContext, on eventLoop: any EventLoop) -> AttemptStepDecision {
        request.headers.replaceOrAdd(name: "x-step", value: "1")
        return .proceed
    }
}

/// Retries a 503 after `statusDelay`, and a request timeout at once (a body up to `bodyLimit` bytes).
struct ScriptedRetryPlanner: RetryPlanner {
    var statusDelay: Duration = .zero
    var perTryTimeout: Duration?
    var maxAttempts = 2
    /// The largest body a retry sends again.
    var bodyLimit = 0
    /// Failures the exchange asked about (the real planner takes a retry from the budget on each yes).
    let asks = RetryAsks()

    func begin(_ request: ProxyRequest) -> RetryPlan {
        .retrying(RetryRun(maxAttempts: maxAttempts, deadline: nil, perTryTimeout: perTryTimeout, bodyLimit: bodyLimit))
    }

    func retry(after error: GatewayError, run: inout RetryRun, context: RequestContext) -> Duration? {
        asks.record()
        guard error.code == .requestTimeout, run.attempts < run.maxAttempts else { return nil }
        run.attempts += 1
        return .zero
    }

    func retry(afterStatus status: HTTPResponseStatus, headers: HTTPHeaders, run: inout RetryRun, context: RequestContext) -> Duration? {
        guard status == .serviceUnavailable, run.attempts < run.maxAttempts else { return nil }
        run.attempts += 1
        return statusDelay
    }
}

/// How often a ``ScriptedRetryPlanner`` was asked after a failed attempt.
final class RetryAsks: Sendable {
    private let count = Atomic<Int>(0)
    func record() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
