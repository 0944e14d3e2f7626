import GatewayConfig
import GatewayCore
import GatewayListener
import GatewayObservability
import GatewayPolicies
import GatewayTracing
import GatewayUpstream

/// The phases of a client request, in the order they run, and the one place
/// that sets that order: each config load (and reload) builds the admission
/// steps and every upstream's route here, and the client connection runs them
/// as given (`GatewayListener/Connection/ClientConnectionHandler+Request.swift`).
///
/// 1. Admission, before the request is routed (``admission(for:interceptor:)``): proxy
///    authentication (`proxy_auth`, when configured), the onboarding site
///    (`http://gateway.invalid/`), then the access rules (`access`). A step
///    that refuses, or answers (a 407, an onboarding page), ends the request.
/// 2. Route: the request's upstream picks its ``UpstreamRoute``
///    (``routes(config:services:)``); a host no upstream names takes the
///    `unconfigured` route, which has observers only.
/// 3. Observers begin, outermost first (``observers(config:services:)``):
///    tracing (while `tracing` is on: the exchange's SERVER span, whose trace
///    context the others read from the record), trace (while `debug` is on;
///    it scrubs the token stores' current tokens from its records), then
///    metrics. They see the request as routed, are told of the rest of the
///    exchange, and never change it.
/// 4. Retry: the upstream's retry planner (`retry`), asked once per client
///    request and after each attempt.
/// 5. Attempt steps, on each upstream attempt, in order: faults toward the
///    app (`faults`, issue 55), rate limit
///    (`rate_limit`), OAuth2 token (`auth: oauth2`), static credential
///    (`auth`), and last, while `tracing` is on, the trace context (the
///    attempt's CLIENT span, the upstream's `traceparent`; the rate limit's
///    and the token's waits are then timed for the span). Then the transport:
///    faults toward the policies, mocks and replay (`faults`, `mocks`,
///    `replay`; ``InjectionPhases``), the recording (`record`), then the upstream pool.
/// 6. Observers finish: the response has gone out, the exchange failed, or
///    the client went away.
///
/// The admission steps, the planner, the attempt steps and the observers are
/// called on the client connection's event loop and never block it: a phase
/// that must wait (a backoff, an upstream's pause, a rate-limit queue slot, a
/// token refresh) returns a future. A body that may be sent twice (retried,
/// or replayed after a 401) is copied as it goes to the first attempt, within
/// the limits the retry planner and the steps give.
///
/// Each upstream's phases are bound to its settings (`retry`, `rate_limit`,
/// `auth`) when its route is built: nothing on the request path looks the
/// config up by upstream name, and a phase the upstream does not configure is
/// not in its route.
enum ExchangePhases {
    /// The phases of `config` as requests run them: its admission steps and
    /// routes, the upstream pool behind them.
    static func activeConfig(_ config: GatewayConfig, services: GatewayServices, interceptor: TLSInterceptor? = nil) -> ActiveConfig {
        ActiveConfig(
            config: config, admission: admission(for: config, interceptor: interceptor), routes: routes(config: config, services: services),
            transport: services.pool, interceptor: interceptor
        )
    }

    /// The admission steps of `config`, in order: proxy authentication (when
    /// configured), the onboarding site (`http://gateway.invalid/`, answered by
    /// the gateway itself, with `interceptor`'s CA), then the access rules.
    static func admission(for config: GatewayConfig, interceptor: TLSInterceptor? = nil) -> [any AdmissionStep] {
        var steps: [any AdmissionStep] = []
        if let auth = config.proxyAuth { steps.append(ProxyAuthStep(config: auth)) }
        steps.append(OnboardingStep(site: OnboardingSite(interceptor: interceptor, proxyAuthRequired: config.proxyAuth != nil)))
        steps.append(AccessStep(access: config.access))
        return steps
    }

    /// The routes of `config`: one per upstream, and the `unconfigured` one.
    static func routes(config: GatewayConfig, services: GatewayServices) -> RouteTable {
        let observers = Self.observers(config: config, services: services)
        let stores = services.tokenStores.stores(for: config, transport: services.pool, events: services.metrics, logger: services.logger)
        // Recordings are redacted as traces are, with this config's rules.
        let recordRedactor = config.upstreams.contains { $0.record != nil } ? TraceRedactor(config: config) : nil
        var byUpstream: [String: UpstreamRoute] = [:]
        for upstream in config.upstreams where byUpstream[upstream.name] == nil {
            byUpstream[upstream.name] = route(
                for: upstream, observers: observers, tokenStore: stores[upstream.name],
                maxEndpoints: config.metrics.maxEndpointsPerUpstream, recordRedactor: recordRedactor, services: services
            )
        }
        // Unconfigured hosts get the trace context too.
        let unconfiguredSteps = services.tracing.map { [$0.propagation] } ?? []
        return RouteTable(byUpstream: byUpstream, unconfigured: UpstreamRoute(observers: observers, steps: unconfiguredSteps))
    }

    /// The observers of every route, outermost first: tracing (while `tracing` is on),
    /// trace (while `debug` is on), then metrics.
    static func observers(config: GatewayConfig, services: GatewayServices) -> [any ExchangeObserver] {
        var observers: [any ExchangeObserver] = []
        if let tracing = services.tracing {
            observers.append(tracing.observer(config: config))
        }
        if config.debug {
            // The token stores' tokens are scrubbed from every record too (an upstream may echo one).
            observers.append(TraceObserver.make(
                config: config, writers: services.traceWriters, boundProxy: services.traceProxyAddress,
                runtimeSecrets: services.tokenStores, logger: services.logger
            ))
        }
        observers.append(MetricsObserver(metrics: services.metrics, config: config, logger: services.logger))
        return observers
    }

    /// One upstream's route: the observers, its retry planner, and its attempt
    /// steps in order (rate limit, OAuth2 token, static credential), each only
    /// when the upstream configures it, then the trace context while tracing is on.
    /// `maxEndpoints`: `metrics.max_endpoints_per_upstream`, which bounds per-endpoint rate limiters too.
    static func route(
        for upstream: UpstreamConfig, observers: [any ExchangeObserver], tokenStore: TokenStore?, maxEndpoints: Int,
        recordRedactor: TraceRedactor? = nil, services: GatewayServices
    ) -> UpstreamRoute {
        let retry = RetryPolicy(upstream: upstream, budgets: services.retryBudgets, events: services.metrics)
        let rateLimit = RateLimitPolicy(
            upstream: upstream, registry: services.rateLimits, maxEndpoints: maxEndpoints, events: services.metrics
        )
        let tokenRefresh = TokenRefreshPolicy(upstream: upstream, store: tokenStore)
        let credential = AuthInjectionPolicy(upstream: upstream)
        // `record`: right in front of the pool, so only what went over the network is recorded.
        let recording: (any UpstreamTransport)? = services.injectionSwitches.applied(to: upstream).record.flatMap { record in
            guard record.enabled, let recordRedactor else { return nil }
            return services.recorders.transport(
                for: record, redactor: recordRedactor, runtimeSecrets: services.tokenStores, logger: services.logger, next: services.pool
            )
        }
        // Mocks, replay and faults (issue 55): absent unless configured (`ExchangePhases+Injection.swift`).
        let injection = InjectionPhases.make(upstream: upstream, services: services, pool: recording ?? services.pool)
        var steps: [any AttemptStep] = []
        if let step = injection?.firstStep { steps.append(step) }
        if let step = rateLimit?.step { steps.append(services.tracing?.timingWaits(of: step, as: .rateLimit) ?? step) }
        if let step = tokenRefresh?.step { steps.append(services.tracing?.timingWaits(of: step, as: .tokenRefresh) ?? step) }
        if let credential { steps.append(credential) }
        if let tracing = services.tracing { steps.append(tracing.propagation) }
        return UpstreamRoute(
            observers: observers, steps: steps, retry: retry?.planner, transport: injection?.transport ?? recording, injects: injection != nil
        )
    }
}
