public import GatewayCore
import NIOConcurrencyHelpers
import Prometheus

/// A finished client exchange, as `MetricsObserver` saw it.
public struct CompletedExchange: Sendable {
    /// Client-visible: from the request head to the end of the response body.
    public var duration: Duration
    public var statusClass: StatusClass
    /// Set when the gateway answered with an error of its own.
    public var errorCode: GatewayError.Code?
    /// Every upstream attempt, in order.
    public var attempts: AttemptList
    /// The protocol the client spoke (``UpstreamHTTPVersion/http1Name``, `http2Name`).
    public var clientHTTPVersion: String

    public init(
        duration: Duration, statusClass: StatusClass, errorCode: GatewayError.Code? = nil, attempts: AttemptList,
        clientHTTPVersion: String = UpstreamHTTPVersion.http1Name
    ) {
        self.duration = duration
        self.statusClass = statusClass
        self.errorCode = errorCode
        self.attempts = attempts
        self.clientHTTPVersion = clientHTTPVersion
    }

    /// Its slot among `gateway_requests_by_protocol_total`'s label sets: client
    /// (http/1.1, h2) × last attempt upstream (http/1.1, h2, none).
    var protocolSlot: Int {
        let client = clientHTTPVersion == UpstreamHTTPVersion.http2Name ? 1 : 0
        let upstream: Int = switch attempts.lastWireVersion {
        case .http1?: 0
        case .http2?: 1
        case nil: 2
        }
        return client * 3 + upstream
    }

    static let protocolLabels = [
        ["http/1.1", "http/1.1"], ["http/1.1", "h2"], ["http/1.1", "none"], ["h2", "http/1.1"], ["h2", "h2"], ["h2", "none"],
    ]
}

/// The upstream phases of `gateway_upstream_phase_seconds`.
public enum UpstreamPhase: Int, Sendable, CaseIterable {
    case connect, tls, ttfb, total

    public var label: String {
        switch self {
        case .connect: "connect"
        case .tls: "tls"
        case .ttfb: "ttfb"
        case .total: "total"
        }
    }
}

/// Everything recorded for one endpoint: its Prometheus handles (the duration
/// histogram made with the endpoint; per status class, error code and phase on
/// first use) and its sliding-window stats. Recording takes the endpoint's own
/// lock once (no I/O under it) plus the Prometheus histograms' locks.
public final class EndpointRecorder: Sendable {
    private struct State {
        var requests: [Counter?] = Array(repeating: nil, count: StatusClass.allCases.count)
        var attempts: [Counter?] = Array(repeating: nil, count: StatusClass.allCases.count)
        var phases: [LatencyHistogram?] = Array(repeating: nil, count: UpstreamPhase.allCases.count)
        /// `gateway_requests_by_protocol_total` of this endpoint's upstream, by ``CompletedExchange/protocolSlot``.
        var protocols: [Counter?] = Array(repeating: nil, count: CompletedExchange.protocolLabels.count)
        var errors: [GatewayError.Code: Counter] = [:]
        var stats: SlidingWindowStats
    }

    public let key: EndpointKey
    private let labels: [String]
    private let factory: MetricHandleFactory
    private let duration: LatencyHistogram
    private let state: NIOLockedValueBox<State>

    init(key: EndpointKey, factory: MetricHandleFactory, stats: SlidingWindowStats) {
        self.key = key
        self.labels = [key.upstream, key.endpoint, key.method]
        self.factory = factory
        self.duration = factory.histogram(.requestDuration, labels)
        // Every status class at 0 from the start: an error-rate panel reads 0, not "No data".
        var state = State(stats: stats)
        state.requests = StatusClass.allCases.map { factory.counter(.requests, [key.upstream, key.endpoint, key.method, $0.label]) }
        self.state = NIOLockedValueBox(state)
    }

    /// Records one finished exchange at `now` (the stats clock).
    public func record(_ exchange: CompletedExchange, at now: ContinuousClock.Instant) {
        duration.record(exchange.duration.seconds)
        let retries = max(0, exchange.attempts.count - 1)
        state.withLockedValue { s in
            counter(&s.requests[exchange.statusClass.rawValue], .requests, exchange.statusClass.label).increment()
            let slot = exchange.protocolSlot
            if s.protocols[slot] == nil {
                // The registry gives every endpoint of the upstream the same counter for these labels.
                s.protocols[slot] = factory.counter(.requestsByProtocol, [key.upstream] + CompletedExchange.protocolLabels[slot])
            }
            s.protocols[slot]!.increment()
            if let code = exchange.errorCode {
                if s.errors[code] == nil { s.errors[code] = factory.counter(.requestErrors, labels + [code.rawValue]) }
                s.errors[code]!.increment()
            }
            exchange.attempts.forEachAttempt { attempt in
                let outcome: StatusClass = attempt.errorCode != nil ? .error : attempt.status.map(StatusClass.init(status:)) ?? .error
                counter(&s.attempts[outcome.rawValue], .upstreamAttempts, outcome.label).increment()
                // A reused connection has no connect or TLS phase: nil, not recorded (not zero).
                if let connect = attempt.connect { phase(&s.phases, .connect).record(connect.seconds) }
                if let tls = attempt.tls { phase(&s.phases, .tls).record(tls.seconds) }
                if let ttfb = attempt.timeToFirstByte { phase(&s.phases, .ttfb).record(ttfb.seconds) }
                if let total = attempt.total { phase(&s.phases, .total).record(total.seconds) }
            }
            s.stats.record(latency: exchange.duration, failed: exchange.statusClass.isFailure, retries: retries, at: now)
        }
    }

    private func counter(_ slot: inout Counter?, _ family: MetricFamily, _ last: String) -> Counter {
        if let counter = slot { return counter }
        let counter = factory.counter(family, labels + [last])
        slot = counter
        return counter
    }

    private func phase(_ slots: inout [LatencyHistogram?], _ phase: UpstreamPhase) -> LatencyHistogram {
        if let histogram = slots[phase.rawValue] { return histogram }
        let histogram = factory.histogram(.upstreamPhase, labels + [phase.label])
        slots[phase.rawValue] = histogram
        return histogram
    }

    /// The window's figures at `now`.
    func snapshot(at now: ContinuousClock.Instant) -> WindowSnapshot {
        // Merged outside the lock: the copy shares storage until the next record.
        let stats = state.withLockedValue { $0.stats }
        return stats.snapshot(at: now)
    }
}
