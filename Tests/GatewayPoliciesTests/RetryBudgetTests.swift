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
        var retry = quickRetry(attempts: 3, budgetMinPerSecond: 4)
        retry.budgetPercent = 0
        let planner = try #require(RetryPolicy(upstream: upstreamConfig(retry: retry), budgets: RetryBudgets(), events: events, clock: clock)).planner
        // 50 requests at once, each answered 503 until the planner gives up.
        let attempts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    guard case .retrying(var run) = planner.begin(.test()) else { return 0 }
                    while planner.retry(afterStatus: .serviceUnavailable, headers: [:], run: &run, context: .test()) != nil {}
                    return run.attempts
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(attempts.count == 50 && attempts.allSatisfy { $0 >= 1 })
        #expect(events.retries.count == 4, "exactly the budget, however many ran at once")
        #expect(attempts.reduce(0, +) == 54)
    }

    /// A route resolves its upstream's budget once; a route built on reload
    /// gets the same one, so a reload does not refill a spent budget.
    @Test func routesOfOneUpstreamShareItsBudgetAcrossReloads() {
        let clock = ManualClock()
        let budgets = RetryBudgets()
        let before = budgets.budget(for: "api")
        #expect(before === budgets.budget(for: "api"))
        #expect(before !== budgets.budget(for: "other"))
        for _ in 0..<10 { before.recordRequest(now: clock.now) }
        #expect(before.tryRetry(percent: 10, minPerSecond: 0, now: clock.now))
        // After a reload: the same window, already spent.
        #expect(!budgets.budget(for: "api").tryRetry(percent: 10, minPerSecond: 0, now: clock.now))
    }

    @Test func percentOfRecentRequests() {
        let clock = ManualClock()
        let budgets = RetryBudgets()
        let api = budgets.budget(for: "api")
        for _ in 0..<100 { api.recordRequest(now: clock.now) }
        let granted = (0..<50).filter { _ in api.tryRetry(percent: 20, minPerSecond: 0, now: clock.now) }.count
        #expect(granted == 20)
        // Other upstreams have their own budget.
        #expect(budgets.budget(for: "other").tryRetry(percent: 20, minPerSecond: 1, now: clock.now))
    }

    @Test func theWindowSlides() {
        let clock = ManualClock()
        let budget = RetryBudgets().budget(for: "api")
        #expect(budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .milliseconds(500))
        #expect(budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
        #expect(!budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .milliseconds(600))  // the first retry left the window
        #expect(budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
        #expect(!budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
        clock.advance(by: .seconds(5))
        #expect(budget.tryRetry(percent: 0, minPerSecond: 2, now: clock.now))
    }
}
