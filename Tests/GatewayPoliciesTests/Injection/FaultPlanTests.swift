import GatewayConfig
import GatewayCore
import GatewayPolicies
import Testing

/// The fault sequence: which matching call gets which fault, from the seed
/// alone (no clock, no sleep).
@Suite struct FaultPlanTests {
    static func sequence(_ plan: FaultPlan, calls: Int, path: String = "/orders", toward: FaultTarget = .app) -> [Bool] {
        (0..<calls).map { _ in plan.draw(method: "GET", path: Substring(path), toward: toward) != nil }
    }

    @Test func theSameSeedGivesTheSameSequence() {
        let rules = [FaultRule(rate: 0.3, action: .error(FaultResponse(status: 503)))]
        let first = Self.sequence(FaultPlan(rules: rules, seed: 42), calls: 200)
        let second = Self.sequence(FaultPlan(rules: rules, seed: 42), calls: 200)
        let other = Self.sequence(FaultPlan(rules: rules, seed: 43), calls: 200)
        #expect(first == second)
        #expect(first != other)
        let fired = first.filter { $0 }.count
        #expect((30...90).contains(fired), "about 30% of 200: \(fired)")
    }

    @Test func everyThirdMatchingCallGetsIt() {
        let orders = EndpointTemplate("GET /orders")!
        let plan = FaultPlan(rules: [FaultRule(endpoint: orders, every: 3, action: .error(FaultResponse(status: 429, retryAfter: .seconds(2))))], seed: 1)
        #expect(Self.sequence(plan, calls: 9) == [false, false, true, false, false, true, false, false, true])
        // Another endpoint neither fires nor counts.
        #expect(Self.sequence(plan, calls: 3, path: "/users") == [false, false, false])
        #expect(Self.sequence(plan, calls: 3) == [false, false, true])
    }

    @Test func rateZeroNeverFiresAndRateOneAlways() {
        let off = FaultPlan(rules: [FaultRule(rate: 0, action: .reset)], seed: 7)
        #expect(!Self.sequence(off, calls: 100).contains(true))
        #expect(!off.hasRules(toward: .app))
        let on = FaultPlan(rules: [FaultRule(rate: 1, action: .reset)], seed: 7)
        #expect(!Self.sequence(on, calls: 100).contains(false))
    }

    @Test func aRuleActsOnlyTowardItsTarget() {
        let plan = FaultPlan(rules: [FaultRule(toward: .policies, action: .error(FaultResponse(status: 503)))], seed: 3)
        #expect(!Self.sequence(plan, calls: 5, toward: .app).contains(true))
        #expect(!Self.sequence(plan, calls: 5, toward: .policies).contains(false))
        #expect(plan.hasRules(toward: .policies) && !plan.hasRules(toward: .app))
    }

    @Test func aLatencyRangeDrawsWithinItRepeatably() {
        let rules = [FaultRule(action: .latency(min: .seconds(1), max: .seconds(3)))]
        let draws = (0..<50).compactMap { _ in FaultPlan(rules: rules, seed: 9).draw(method: "GET", path: "/", toward: .app)?.delay }
        let plan = FaultPlan(rules: rules, seed: 9)
        let delays = (0..<50).compactMap { _ in plan.draw(method: "GET", path: "/", toward: .app)?.delay }
        #expect(delays.count == 50)
        #expect(delays.allSatisfy { $0 >= .seconds(1) && $0 <= .seconds(3) })
        #expect(Set(delays.map { $0.components.seconds * 1000 + $0.components.attoseconds / 1_000_000_000_000_000 }).count > 10)
        #expect(Set(draws).count == 1, "a fresh plan with the same seed draws the same first delay")
        let fixed = FaultPlan(rules: [FaultRule(action: .latency(min: .seconds(5), max: .seconds(5)))], seed: 1)
        #expect(fixed.draw(method: "GET", path: "/", toward: .app)?.delay == .seconds(5))
    }

    @Test func anErrorFaultCarriesRetryAfterInWholeSecondsAndItsMark() {
        let response = FaultResponse(status: 429, retryAfter: .milliseconds(1500)).injected(toward: .app)
        #expect(response.status.code == 429)
        #expect(response.headers["Retry-After"] == ["2"])
        #expect(response.headers["X-Gateway-Injected"] == ["fault:error"])
        #expect(String(buffer: response.body).contains("injected_fault"))
    }
}
