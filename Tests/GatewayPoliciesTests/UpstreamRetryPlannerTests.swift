import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

/// The retry policy's rules as the exchange's planner: which requests it
/// retries (a body within `buffer_limit`: the exchange keeps a copy), and the wait
/// after each failed attempt (counted, within attempts and budget).
struct UpstreamRetryPlannerTests {
    func planner(_ retry: RetryConfig, events: RecordingEvents = RecordingEvents()) throws -> any RetryPlanner {
        let policy = RetryPolicy(
            upstream: upstreamConfig(retry: retry), budgets: RetryBudgets(), events: events, clock: ManualClock(), random: LockedRandomSource(seed: 1)
        )
        return try #require(policy).planner
    }

    static let retry = RetryConfig(attempts: 3, backoffBase: .milliseconds(10), backoffMax: .milliseconds(40))

    @Test func aBodylessSafeRequestIsRetried() throws {
        let planner = try planner(Self.retry)
        guard case .retrying(let run) = planner.begin(.test()) else { Issue.record("expected retrying"); return }
        #expect(run.maxAttempts == 3 && run.attempts == 1)
    }

    @Test func aPostGetsOneAttemptAndASafeRequestWithABodyIsRetriedWithinTheBufferLimit() throws {
        let planner = try planner(Self.retry)
        guard case .single = planner.begin(.test(.POST)) else { Issue.record("a POST is not retried"); return }
        let put = ProxyRequest.test(.PUT, body: .bytes(ByteBuffer(string: "x")))
        guard case .retrying(let run) = planner.begin(put) else { Issue.record("a PUT is retried"); return }
        #expect(run.bodyLimit == Self.retry.bufferLimit, "its body is kept up to buffer_limit")
        let keyed = ProxyRequest.test(.POST, headers: ["Idempotency-Key": "k"], body: .bytes(ByteBuffer(string: "x")))
        guard case .retrying = planner.begin(keyed) else { Issue.record("a POST with Idempotency-Key is retried"); return }
    }

    @Test func theRunCarriesTheBufferLimitWhateverTheBodysLength() throws {
        var retry = Self.retry
        retry.bufferLimit = 4
        let planner = try planner(retry)
        // A larger body is not kept by the exchange, so it is not retried; its
        // one attempt still runs under the run's per_try_timeout.
        for length in [4, 5, nil] as [Int?] {
            guard case .retrying(let run) = planner.begin(.test(.PUT, body: .passedThrough(declaredLength: length))) else {
                Issue.record("a PUT is planned as retrying (\(length.map(String.init) ?? "chunked"))"); return
            }
            #expect(run.bodyLimit == 4)
        }
    }

    @Test func waitsAreCountedAndStopAtTheLastAttempt() throws {
        let events = RecordingEvents()
        let planner = try planner(RetryConfig(attempts: 2, backoffBase: .milliseconds(10), backoffMax: .milliseconds(40), budgetPercent: 100, budgetMinPerSecond: 100), events: events)
        guard case .retrying(var run) = planner.begin(.test()) else { Issue.record("expected retrying"); return }
        let delay = try #require(planner.retry(afterStatus: .serviceUnavailable, headers: [:], run: &run, context: .test()))
        #expect(delay >= .zero && delay <= .milliseconds(10), "full jitter within the first ceiling")
        #expect(run.attempts == 2)
        #expect(events.retries == ["status_503"])
        #expect(planner.retry(after: GatewayError(.connectFailed, "refused"), run: &run, context: .test()) == nil, "no attempts left")
    }

    @Test func retryAfterOnA503IsTheWaitAndOtherStatusesAreFinal() throws {
        let planner = try planner(RetryConfig(attempts: 3, budgetPercent: 100, budgetMinPerSecond: 100))
        guard case .retrying(var run) = planner.begin(.test()) else { Issue.record("expected retrying"); return }
        #expect(planner.retry(afterStatus: .ok, headers: [:], run: &run, context: .test()) == nil)
        #expect(planner.retry(afterStatus: .notFound, headers: [:], run: &run, context: .test()) == nil)
        // The exchange asks first, so that a 200's fields are never made HTTPHeaders for the planner.
        #expect(!planner.considers(status: .ok))
        #expect(planner.considers(status: .serviceUnavailable))
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: ["Retry-After": "2"], run: &run, context: .test()) == .seconds(2))
        #expect(planner.retry(afterStatus: .serviceUnavailable, headers: ["X-Gateway-Error": "local_rate_limit"], run: &run, context: .test()) == nil, "the gateway's own answers are never retried")
    }
}
