import GatewayCore
import GatewayObservability
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import Tracing

/// One traced exchange: the gateway's SERVER span, started as the exchange
/// begins (``TracingObserver``), and a CLIENT span per upstream attempt,
/// started as the attempt is prepared (``TracePropagationStep``) so that its
/// id is the upstream's parent. Nothing is written to the spans on the way:
/// when the exchange finishes, its ``SpanPlan`` (from the record) gives their
/// attributes and events, and they end at the instants the record kept.
///
/// It is the exchange's ``ExchangeTraceContext`` on the record (its ids go to
/// log lines, trace records and HAR entries) and its observation. Called on
/// the exchange's event loop; a lock all the same, as the record holding it
/// may be read elsewhere.
final class ExchangeSpans: ExchangeTraceContext, ExchangeObservation {
    /// A CLIENT span started, with the record's attempt it became.
    private typealias Client = (span: any Tracing.Span, attempt: Int)

    private struct State {
        /// The exchange's record until it finishes; then let go, as the record
        /// holds this object (its trace context) and would never be freed.
        var record: ExchangeRecord?
        var clients: [Client] = []
        var waits: [RecordedWait] = []
        var finished = false
    }

    let traceID: String
    let spanID: String
    private let tracer: any Tracer
    private let server: any Tracing.Span
    private let name: String
    private let route: String
    /// The request as routed, its body left out.
    private let request: ProxyRequest
    private let requestID: String
    private let clientAddress: String
    private let redactor: TraceRedactor
    private let state: NIOLockedValueBox<State>

    init(
        tracer: any Tracer, server: any Tracing.Span, ids: TraceParent, name: String, route: String,
        request: ProxyRequest, context: RequestContext, redactor: TraceRedactor
    ) {
        self.tracer = tracer
        self.server = server
        self.traceID = ids.traceID
        self.spanID = ids.parentID
        self.name = name
        self.route = route
        var snapshot = request
        snapshot.body = .empty
        self.request = snapshot
        self.requestID = context.id
        self.clientAddress = context.clientAddress
        self.redactor = redactor
        self.state = NIOLockedValueBox(State(record: context.record))
    }

    /// Starts the CLIENT span of the attempt about to be sent and points the
    /// attempt's `traceparent` (and `tracestate`) at it. `record`: the exchange's.
    func startAttempt(headers: inout HTTPHeaders, record: ExchangeRecord) {
        let client = tracer.startSpan(name, context: server.context, ofKind: .client, at: DefaultTracerClock.now)
        var carrier = TraceCarrier()
        tracer.inject(client.context, into: &carrier, using: TraceCarrierInjector())
        carrier.write(to: &headers)
        // The transport records the attempt right after the last step: the index it gets.
        let attempt = record.attemptCount
        state.withLockedValue { $0.clients.append((client, attempt)) }
    }

    /// `wait`, its length kept for an event of the SERVER span.
    func timing(_ wait: AttemptWait, as kind: TracedWait) -> AttemptWait {
        let start = ContinuousClock.now
        return wait.whenEnded { [self] in
            let end = ContinuousClock.now
            state.withLockedValue { $0.waits.append(RecordedWait(kind: kind, start: start, end: end)) }
        }
    }

    /// Whether the sampler records this exchange (else its spans are no-ops, the context still passed on).
    var isSampled: Bool { server.isRecording }

    /// The waits timed so far.
    var waits: [RecordedWait] { state.withLockedValue { $0.waits } }

    // MARK: ExchangeObservation

    func requestBodyPart(_ buffer: ByteBuffer) {}

    func finish(_ outcome: ExchangeOutcome) {
        let taken = state.withLockedValue { (s: inout State) -> (record: ExchangeRecord, clients: [Client], waits: [RecordedWait])? in
            guard !s.finished, let record = s.record else { return nil }
            s.finished = true
            s.record = nil
            return (record, s.clients, s.waits)
        }
        // A sampled-out trace's spans record nothing: no plan to make.
        guard let taken, server.isRecording else { return }
        let clock = WallClock()
        let plan = SpanPlan(
            SpanPlan.Inputs(
                request: request, route: route, requestID: requestID, clientAddress: clientAddress,
                attempts: taken.record.attempts, retries: taken.record.retries, waits: taken.waits,
                clientAttempts: taken.clients.map { $0.attempt }, outcome: outcome, end: clock.now
            ),
            redactor: redactor
        )
        for (client, planned) in zip(taken.clients, plan.clients) {
            Self.end(client.span, as: planned, clock: clock)
        }
        Self.end(server, as: plan.server, clock: clock)
    }

    private static func end(_ span: any Tracing.Span, as planned: SpanPlan.Planned, clock: WallClock) {
        span.attributes = planned.attributes
        for event in planned.events {
            span.addEvent(SpanEvent(name: event.name, at: clock.timestamp(event.at), attributes: event.attributes))
        }
        if let status = planned.status { span.setStatus(status) }
        span.end(at: clock.timestamp(planned.end))
    }
}

/// The observation of an exchange the tracer gave no context (a sampler
/// that makes none, `always_off` from `OTEL_TRACES_SAMPLER`): nothing to end,
/// the request's own trace fields go on untouched.
final class UntracedObservation: ExchangeObservation, Sendable {
    static let shared = UntracedObservation()

    func requestBodyPart(_ buffer: ByteBuffer) {}

    func finish(_ outcome: ExchangeOutcome) {}
}
