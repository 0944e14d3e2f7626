import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// The rate-limit policy as the exchange's synchronous step: it proceeds,
/// answers 429, or waits (a queue slot or an upstream's pause), with the same
/// rules as the async policy; the limiter's pump runs on a manual clock.
@Suite(.timeLimit(.minutes(1)))
struct RateLimitStepTests {
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    func step(_ config: RateLimitConfig, clock: ManualClock, events: RecordingEvents = RecordingEvents()) throws -> any AttemptStep {
        let policy = RateLimitPolicy(upstream: upstreamConfig(rateLimit: config), registry: RateLimitRegistry(), events: events, clock: clock)
        return try #require(policy).step
    }

    func prepare(_ step: any AttemptStep) -> AttemptStepDecision {
        var request = ProxyRequest.test()
        return step.prepare(&request, context: .test(), on: loop)
    }

    @Test func withinTheRateItProceedsAtOnce() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: 10, burst: 2), clock: ManualClock())
        guard case .proceed = prepare(step) else { Issue.record("expected proceed"); return }
        guard case .proceed = prepare(step) else { Issue.record("expected proceed"); return }
    }

    @Test func overTheRateARequestWaitsForItsTokenAndIsNotAskedAgain() async throws {
        let clock = ManualClock()
        let events = RecordingEvents()
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1), clock: clock, events: events)
        guard case .proceed = prepare(step) else { Issue.record("expected proceed"); return }
        guard case .wait(let wait) = prepare(step) else { Issue.record("expected a wait"); return }
        #expect(!wait.repeatStep, "a granted slot finishes the step")
        #expect(events.depths.last == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        _ = try await wait.future.get()
        #expect(events.depths.last == 0)
    }

    @Test func aWithdrawnWaitLeavesTheQueueAndFails() async throws {
        let clock = ManualClock()
        let events = RecordingEvents()
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1), clock: clock, events: events)
        _ = prepare(step)
        guard case .wait(let wait) = prepare(step) else { Issue.record("expected a wait"); return }
        wait.cancel()
        await #expect(throws: CancellationError.self) { try await wait.future.get() }
        #expect(events.depths.last == 0)
    }

    @Test func aFullQueueAnswers429WithRetryAfter() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: 1, burst: 1, maxQueue: 0), clock: ManualClock())
        _ = prepare(step)
        guard case .respond(let response) = prepare(step) else { Issue.record("expected a 429"); return }
        #expect(response.status == .tooManyRequests)
        #expect(response.headers.first(name: "Retry-After") == "1")
        #expect(response.headers.first(name: "X-Gateway-Error") == "local_rate_limit")
    }

    @Test func anUpstreamSayingNothingRemainsPausesTheNextRequest() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: nil), clock: ManualClock())
        let request = ProxyRequest.test()
        let head = UpstreamResponseHead(
            status: .ok, headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "5"], declaredLength: 0, hasBody: false
        )
        _ = step.responseHead(head, of: request, context: .test(), mayReplay: false, on: loop)
        guard case .wait(let wait) = prepare(step) else { Issue.record("expected the pause"); return }
        #expect(wait.repeatStep, "after a pause the step looks again (it may have been extended)")
        wait.cancel()
    }

    @Test func responsesWithoutRateLimitFieldsSetNoPause() throws {
        let step = try step(RateLimitConfig(requestsPerSecond: nil), clock: ManualClock())
        let head = UpstreamResponseHead(status: .ok, headers: ["X-Rate": "0", "Content-Length": "0"], declaredLength: 0, hasBody: false)
        _ = step.responseHead(head, of: .test(), context: .test(), mayReplay: false, on: loop)
        guard case .proceed = prepare(step) else { Issue.record("expected proceed"); return }
    }
}
