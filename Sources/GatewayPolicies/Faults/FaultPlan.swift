public import GatewayConfig
public import GatewayCore
import Synchronization

/// An upstream's fault rules with their one sequence: which matching request
/// gets which fault. The rules are tried in order; a rule fires on every n-th
/// matching call (`every`) or with its `rate`, drawn from a generator seeded
/// with `faults.seed`, so the same seed and the same requests give the same
/// faults (Dev Proxy's GenericRandomErrorPlugin draws from an unseeded one).
/// Shared by every event loop: the counters and the generator sit behind one
/// lock, taken only for a rule that matches and may fire.
public final class FaultPlan: Sendable {
    public let rules: [FaultRule]
    public let seed: UInt64
    private let state: Mutex<State>

    struct State {
        var random: SplitMix64
        /// Matching calls per rule so far (for `every`).
        var calls: [Int]
    }

    /// A fault that fires on one request: its rule and, for a latency, the wait drawn.
    public struct Firing: Sendable, Equatable {
        public var rule: FaultRule
        public var ruleIndex: Int
        public var delay: Duration?

        public var injection: Injection {
            Injection(source: .fault, kind: rule.kind, toward: rule.toward.rawValue)
        }
    }

    public init(rules: [FaultRule], seed: UInt64) {
        self.rules = rules
        self.seed = seed
        self.state = Mutex(State(random: SplitMix64(seed: seed), calls: Array(repeating: 0, count: rules.count)))
    }

    /// Whether any rule acts at `stage` (a phase without one is not built).
    public func hasRules(at stage: FaultStage) -> Bool {
        rules.contains { $0.stage == stage && $0.canFire }
    }

    /// Whether any rule acts toward `target` before the response (``FaultStage/request`` or ``FaultStage/upstream``).
    public func hasRules(toward target: FaultTarget) -> Bool {
        hasRules(at: target == .app ? .request : .upstream)
    }

    /// The fault a request gets toward `target` before its response, if any. Called once per attempt.
    public func draw(method: String, path: Substring, toward target: FaultTarget) -> Firing? {
        draw(method: method, path: path, at: target == .app ? .request : .upstream)
    }

    /// The fault a request gets at `stage`, if any. Called once per attempt and stage.
    public func draw(method: String, path: Substring, at stage: FaultStage) -> Firing? {
        for index in rules.indices {
            let rule = rules[index]
            guard rule.stage == stage, rule.canFire else { continue }
            if let endpoint = rule.endpoint, !endpoint.matches(method: method, path: path) { continue }
            let fires: (Bool, Duration?) = state.withLock { s in
                s.calls[index] += 1
                let fires: Bool
                if let every = rule.every {
                    fires = s.calls[index] % every == 0
                } else {
                    fires = rule.rate >= 1 || Double.random(in: 0..<1, using: &s.random) < rule.rate
                }
                guard fires, case .latency(let low, let high) = rule.action, low < high else { return (fires, nil) }
                let span = (high - low).components
                let micros = span.seconds * 1_000_000 + span.attoseconds / 1_000_000_000_000
                return (true, low + .microseconds(Int64.random(in: 0...max(0, micros), using: &s.random)))
            }
            guard fires.0 else { continue }
            var delay = fires.1
            if delay == nil, case .latency(let low, _) = rule.action { delay = low }
            return Firing(rule: rule, ruleIndex: index, delay: delay)
        }
        return nil
    }
}

extension FaultRule {
    /// False for a rule at rate 0 (written, but off): it is skipped without a lock.
    var canFire: Bool { every != nil || rate > 0 }
}

extension FaultsConfig {
    /// The plan of these rules, or nil when disabled or empty. `seed`: the
    /// configured one, or one drawn for the run (shown by `gateway faults list`
    /// and logged, so a run can be repeated).
    public func plan(seed: UInt64) -> FaultPlan? {
        guard enabled, !rules.isEmpty else { return nil }
        return FaultPlan(rules: rules, seed: seed)
    }
}
