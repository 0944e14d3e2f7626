import GatewayConfig
import GatewayCore
import GatewayPolicies

/// The injection phases of one upstream (issue 55), built with its route and
/// absent when it configures none (or turns them off with `enabled: false`):
///
/// - faults toward the app: the first attempt step (``FaultStep``), before the
///   rate limit and the credential, so the client sees the fault and the
///   gateway's policies do not;
/// - faults toward the policies: a transport in front of the next one
///   (``FaultTransport``): the attempt fails as the upstream's would, so the
///   retry planner, `honor_upstream` and the token refresh see it;
/// - faults on the response body toward the app (a slow body, a reset in its
///   middle): the outermost transport (``FaultTransport`` at `responseBody`), which
///   shapes whatever answers (the upstream, a mock, a replayed entry);
/// - mocks, then replay: a transport in front of the pool (``MockTransport``)
///   that answers matching requests before the network.
///
/// `Exchange` → steps (fault toward app, rate limit, token, credential, trace
/// context) → body faults → fault toward policies → mocks/replay → pool.
struct InjectionPhases {
    var firstStep: (any AttemptStep)?
    var transport: (any UpstreamTransport)?

    init(upstream: UpstreamConfig, pool: any UpstreamTransport, faultPlan: FaultPlan?, replay: HARReplayTable?) {
        let mocks = upstream.mocks.flatMap { $0.enabled && !$0.rules.isEmpty ? $0 : nil }
        var transport: (any UpstreamTransport)?
        if mocks != nil || replay != nil {
            let unmatched: UnmatchedMode = mocks?.unmatched == .block || (replay != nil && upstream.replay?.unmatched == .block) ? .block : .pass
            transport = MockTransport(mocks: mocks.map { MockPlan(rules: $0.rules) }, replay: replay, unmatched: unmatched, next: pool)
        }
        if let faultPlan {
            if faultPlan.hasRules(toward: .policies) {
                transport = FaultTransport(plan: faultPlan, next: transport ?? pool)
            }
            if faultPlan.hasRules(at: .responseBody) {
                transport = FaultTransport(plan: faultPlan, stage: .responseBody, next: transport ?? pool)
            }
            // A plan whose rules are all at rate 0 keeps its step: what runs is measured as configured.
            if faultPlan.hasRules(at: .request) || faultPlan.rules.allSatisfy({ $0.stage == .request }) {
                firstStep = FaultStep(plan: faultPlan)
            }
        }
        self.transport = transport
    }
}

extension InjectionPhases {
    /// The phases of `upstream` with the runtime switches applied
    /// (``InjectionSwitches``): its fault plan (the seed drawn when none is
    /// written is logged, so a run can be repeated) and its HAR loaded now.
    static func make(upstream configured: UpstreamConfig, services: GatewayServices, pool: any UpstreamTransport) -> InjectionPhases? {
        let upstream = services.injectionSwitches.applied(to: configured)
        let plan = upstream.faults.flatMap { faults in
            faults.plan(seed: services.injectionSwitches.seed(upstream: upstream.name, configured: faults.seed))
        }
        var replay: HARReplayTable?
        if let config = upstream.replay, config.enabled {
            do {
                replay = try HARReplayTable(config: config)
            } catch {
                services.logger.error("replay for upstream \(upstream.name): \(config.har) is not a HAR file this gateway reads (\(error)); requests go on unreplayed")
            }
        }
        let hasMocks = upstream.mocks.map { $0.enabled && !$0.rules.isEmpty } ?? false
        guard plan != nil || replay != nil || hasMocks else { return nil }
        if let plan {
            services.logger.notice("faults for upstream \(upstream.name): \(plan.rules.count) rule(s), seed \(plan.seed)")
        }
        return InjectionPhases(upstream: upstream, pool: pool, faultPlan: plan, replay: replay)
    }
}
