import GatewayConfig
import GatewayCore
import GatewayPolicies
import GatewayTesting
import Testing

@Suite(.timeLimit(.minutes(1)))
struct RetryBudgetTests {
    @Test func minimumPerSecondCapsRetriesUnderConcurrency() async throws {
        let clock = ManualClock()
        let events = RecordingEvents()
        let upstream = ScriptedUpstream([.status(503)])
        var retry = quickRetry(attempts: 3, budgetMinPerSecond: 4)
        retry.budgetPercent = 0
        let policy = try #require(RetryPolicy(upstream: upstreamConfig(retry: retry), budgets: RetryBudgets(), events: events, clock: clock))
        let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
            for _ in 0..<50 { group.addTask { try await policy.run(.test(), upstream: upstream).status.code } }
            return try await group.reduce(into: [UInt]()) { $0.append($1) }
        }
        #expect(statuses.count == 50 && statuses.allSatisfy { $0 == 503 })
        #expect(events.retries.count == 4, "exactly the budget, however many ran at once")
        #expect(upstream.calls == 54)
    }

    @Test func percentOfRecentRequests() {
        let clock = ManualClock()
        let budgets = RetryBudgets()
        for _ in 0..<100 { budgets.recordRequest(upstream: "api", now: clock.now) }
        let granted = (0..<50).filter { _ in budgets.tryRetry(upstream: "api", percent: 20, minPerSecond: 0, now: clock.now) }.count
        #expect(granted == 20)
        // Other upstreams have their own budget.
        #expect(budgets.tryRetry(upstream: "other", percent: 20, minPerSecond: 1, now: clock.now))
    }

    @Test func theWindowSlides() {
        let clock = ManualClock()
        let budgets = RetryBudgets()
        #expect(budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .milliseconds(500))
        #expect(budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
        #expect(!budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .milliseconds(600))  // the first retry left the window
        #expect(budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
        #expect(!budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .seconds(5))
        #expect(budgets.tryRetry(upstream: "api", percent: 0, minPerSecond: 2, now: clock.now))
    }
}
