import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import NIOCore
import NIOHTTP1
import Testing

@Suite(.timeLimit(.minutes(1)))
struct RetryPolicyTests {
    func policy(_ retry: RetryConfig, rateLimit: RateLimitConfig? = nil, clock: any PolicyClock = ManualClock(), events: RecordingEvents = RecordingEvents(), budgets: RetryBudgets = RetryBudgets()) throws -> RetryPolicy {
        try #require(RetryPolicy(upstream: upstreamConfig(retry: retry, rateLimit: rateLimit), budgets: budgets, events: events, clock: clock, random: LockedRandomSource(seed: 1)))
    }

    @Test func failsTwiceThenSucceeds() async throws {
        let upstream = ScriptedUpstream([.fail(.connectFailed), .status(503), .status(200)])
        let events = RecordingEvents()
        let response = try await policy(quickRetry(), events: events).run(.test(), upstream: upstream)
        #expect(response.status == .ok)
        #expect(upstream.calls == 3)
        #expect(events.retries == ["connect_failed", "status_503"])
    }

    @Test func givesUpAfterAttemptsAndReturnsTheLastResponse() async throws {
        let upstream = ScriptedUpstream([.status(502)])
        let response = try await policy(quickRetry(attempts: 3)).run(.test(), upstream: upstream)
        #expect(response.status.code == 502)
        #expect(upstream.calls == 3)
    }

    @Test func lastErrorIsThrownAsIs() async throws {
        let upstream = ScriptedUpstream([.fail(.connectionReset)])
        await #expect(throws: GatewayError.self) { try await policy(quickRetry(attempts: 2)).run(.test(), upstream: upstream) }
        #expect(upstream.calls == 2)
    }

    @Test func onlyConfiguredConditionsAreRetried() async throws {
        let notListed = ScriptedUpstream([.status(500), .status(200)])
        #expect(try await policy(quickRetry()).run(.test(), upstream: notListed).status.code == 500)
        #expect(notListed.calls == 1)
        let resetNotListed = ScriptedUpstream([.fail(.connectionReset), .status(200)])
        await #expect(throws: GatewayError.self) {
            try await policy(quickRetry(on: [.connectFailure])).run(.test(), upstream: resetNotListed)
        }
        #expect(resetNotListed.calls == 1)
        let pinFailure = ScriptedUpstream([.fail(.pinMismatch), .status(200)])
        await #expect(throws: GatewayError.self) { try await policy(quickRetry()).run(.test(), upstream: pinFailure) }
        #expect(pinFailure.calls == 1)
    }

    @Test func anUpstreamWithoutRetryConfigGetsNoPolicy() {
        #expect(RetryPolicy(upstream: upstreamConfig(retry: nil), budgets: RetryBudgets()) == nil)
        #expect(RetryPolicy(upstream: upstreamConfig(retry: nil, rateLimit: RateLimitConfig()), budgets: RetryBudgets()) == nil)
    }

    /// Issue 18: a policy is bound to its upstream's settings when the route is
    /// built; the request's `upstreamName` is never looked up (the route chose the policy).
    @Test func eachUpstreamsPolicyAppliesTheSettingsItWasBuiltWith() async throws {
        let budgets = RetryBudgets()
        let twice = try #require(RetryPolicy(upstream: upstreamConfig("a", retry: quickRetry(attempts: 2)), budgets: budgets, clock: ManualClock()))
        let four = try #require(RetryPolicy(upstream: upstreamConfig("b", retry: quickRetry(attempts: 4)), budgets: budgets, clock: ManualClock()))
        #expect(twice.upstream == "a" && twice.config.attempts == 2)
        #expect(four.upstream == "b" && four.config.attempts == 4)
        for name in ["a", "b", "elsewhere", nil] as [String?] {
            let a = ScriptedUpstream([.status(503)])
            let b = ScriptedUpstream([.status(503)])
            #expect(try await twice.run(.test(upstream: name), upstream: a).status.code == 503)
            #expect(try await four.run(.test(upstream: name), upstream: b).status.code == 503)
            #expect(a.calls == 2 && b.calls == 4, "upstreamName \(name ?? "nil")")
        }
    }

    @Test func postIsRetriedOnlyWithIdempotencyKeyOrOptIn() async throws {
        let body = ProxyBody.bytes(ByteBuffer(string: "order"))
        let plain = ScriptedUpstream([.status(503), .status(201)])
        #expect(try await policy(quickRetry()).run(.test(.POST, body: body), upstream: plain).status.code == 503)
        #expect(plain.calls == 1)

        let keyed = ScriptedUpstream([.status(503), .status(201)])
        let withKey = ProxyRequest.test(.POST, headers: ["Idempotency-Key": "abc-123"], body: body)
        #expect(try await policy(quickRetry()).run(withKey, upstream: keyed).status.code == 201)
        #expect(keyed.bodies == [Array("order".utf8), Array("order".utf8)])

        var optIn = quickRetry()
        optIn.retryNonIdempotent = true
        let patched = ScriptedUpstream([.fail(.connectionReset), .status(200)])
        #expect(try await policy(optIn).run(.test(.PATCH, body: body), upstream: patched).status.code == 200)
        #expect(patched.calls == 2)
    }

    @Test func streamedBodyWithinTheLimitIsBufferedAndReplayed() async throws {
        let source = ChunkedSource([Array("hello ".utf8), Array("world".utf8)])
        let upstream = ScriptedUpstream([.status(503), .status(200)])
        let request = ProxyRequest.test(.PUT, body: .stream(source, declaredLength: nil))
        #expect(try await policy(quickRetry(bufferLimit: 64)).run(request, upstream: upstream).status == .ok)
        #expect(upstream.bodies == [Array("hello world".utf8), Array("hello world".utf8)])
    }

    @Test func declaredBodyOverTheLimitStreamsOnceUntouched() async throws {
        let source = ChunkedSource([[UInt8](repeating: 1, count: 600), [UInt8](repeating: 2, count: 600)])
        let upstream = ScriptedUpstream([.status(503), .status(200)])
        let request = ProxyRequest.test(.PUT, body: .stream(source, declaredLength: 1200))
        let response = try await policy(quickRetry(bufferLimit: 1000)).run(request, upstream: upstream)
        #expect(response.status.code == 503, "not retried")
        #expect(upstream.calls == 1)
        #expect(upstream.bodies == [[UInt8](repeating: 1, count: 600) + [UInt8](repeating: 2, count: 600)])
    }

    @Test func chunkedBodyOverTheLimitIsForwardedIntactAndNotRetried() async throws {
        let chunks = (0..<5).map { [UInt8](repeating: UInt8($0), count: 300) }
        let source = ChunkedSource(chunks)
        let upstream = ScriptedUpstream([.fail(.connectionReset), .status(200)])
        let request = ProxyRequest.test(.PUT, body: .stream(source, declaredLength: nil))
        await #expect(throws: GatewayError.self) { try await policy(quickRetry(bufferLimit: 1000)).run(request, upstream: upstream) }
        #expect(upstream.calls == 1)
        #expect(upstream.bodies == [chunks.flatMap { $0 }], "prefix read for the buffer + the rest, in order")
        #expect(source.served == 5)
    }

    @Test func retryAfterWithinMaxWaitIsWaitedExactly() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(429, headers: [("Retry-After", "3")]), .status(200)])
        var retry = quickRetry()
        retry.backoffBase = .seconds(60)
        retry.backoffMax = .seconds(60)
        let policy = try policy(retry, clock: clock)
        let task = Task { try await policy.run(.test(), upstream: upstream) }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(2999))
        #expect(upstream.calls == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await task.value.status == .ok)
        #expect(upstream.calls == 2)
    }

    @Test func retryAfterAsDateInThePastRetriesNow() async throws {
        let clock = ManualClock(secondsSince1970: 784_111_777 + 60)  // a minute after Sun, 06 Nov 1994 08:49:37 GMT
        let upstream = ScriptedUpstream([.status(503, headers: [("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT")]), .status(200)])
        var retry = quickRetry()
        retry.backoffBase = .seconds(60)
        #expect(try await policy(retry, clock: clock).run(.test(), upstream: upstream).status == .ok)
        #expect(clock.elapsed == .zero)
    }

    @Test func retryAfterBeyondMaxWaitReturnsTheUpstreamResponseUntouched() async throws {
        let upstream = ScriptedUpstream([.status(429, headers: [("Retry-After", "11"), ("X-Upstream", "yes")]), .status(200)])
        let response = try await policy(quickRetry(), rateLimit: RateLimitConfig(requestsPerSecond: nil, maxWait: .seconds(10))).run(.test(), upstream: upstream)
        #expect(response.status.code == 429)
        #expect(response.headers.first(name: "retry-after") == "11")
        #expect(response.headers.first(name: "x-upstream") == "yes")
        #expect(upstream.calls == 1)
    }

    @Test func aResponseMadeByTheGatewayIsNotRetried() async throws {
        let upstream = ScriptedUpstream([.status(429, headers: [("X-Gateway-Error", "local_rate_limit")]), .status(200)])
        #expect(try await policy(quickRetry()).run(.test(), upstream: upstream).status.code == 429)
        #expect(upstream.calls == 1)
    }

    @Test func backoffSleepsFollowTheSeededJitter() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(503), .status(503), .status(200)])
        let retry = RetryConfig(attempts: 3, backoffBase: .seconds(1), backoffMax: .seconds(10))
        let policy = try policy(retry, clock: clock)
        let expected = LockedRandomSource(seed: 1)
        let first = Backoff.fullJitter(retry: 0, base: .seconds(1), max: .seconds(10), unit: expected.nextUnit())
        let second = Backoff.fullJitter(retry: 1, base: .seconds(1), max: .seconds(10), unit: expected.nextUnit())
        let task = Task { try await policy.run(.test(), upstream: upstream) }
        await clock.waitForSleepers(1)
        clock.advance(by: first)
        while upstream.calls < 2 { await Task.yield() }
        await clock.waitForSleepers(1)
        clock.advance(by: second - .nanoseconds(1))
        #expect(upstream.calls == 2)
        clock.advance(by: .nanoseconds(1))
        #expect(try await task.value.status == .ok)
        #expect(first <= .seconds(1) && second <= .seconds(2))
    }

    @Test func perTryTimeoutEndsAHangingAttemptAndRetries() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.hang, .status(200)])
        var retry = quickRetry()
        retry.perTryTimeout = .seconds(2)
        let events = RecordingEvents()
        let policy = try policy(retry, clock: clock, events: events)
        let task = Task { try await policy.run(.test(), upstream: upstream) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(2))
        #expect(try await task.value.status == .ok)
        #expect(events.retries == ["request_timeout"])
    }

    @Test func deadlineStopsRetrying() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.hang])
        var retry = quickRetry()
        retry.perTryTimeout = .seconds(2)
        retry.deadline = .seconds(3)
        let policy = try policy(retry, clock: clock)
        let task = Task { try await policy.run(.test(), upstream: upstream) }
        await clock.waitForSleepers(2)  // per-try timer and deadline
        clock.advance(by: .seconds(2))
        while upstream.calls < 2 { await Task.yield() }
        await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: GatewayError.self) { try await task.value }
        #expect(error?.code == .requestTimeout)
        #expect(upstream.calls == 2)
    }

    @Test func cancellationDuringBackoffStopsRetries() async throws {
        let clock = ManualClock()
        let upstream = ScriptedUpstream([.status(503)])
        let retry = RetryConfig(attempts: 5, backoffBase: .seconds(10), backoffMax: .seconds(10))
        let policy = try policy(retry, clock: clock)
        let task = Task { try await policy.run(.test(), upstream: upstream) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        clock.advance(by: .seconds(100))
        #expect(upstream.calls == 1)
        #expect(clock.sleeperCount == 0)
    }
}
