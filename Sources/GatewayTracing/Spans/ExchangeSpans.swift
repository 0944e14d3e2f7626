import GatewayCore
import GatewayObservability
import NIOCore
import NIOHTTP1
import Synchronization

/// One traced exchange: the ids of the gateway's SERVER span, given as the
/// exchange begins (``TracingObserver``), and of a CLIENT span per upstream
/// attempt, given as the attempt is prepared (``TracePropagationStep``) so
/// that its id is the upstream's parent. No span exists on the way: when the
/// exchange finishes, its ``SpanPlan`` (from the record) writes each span
/// straight as OTLP protobuf (``OTLPSpanWriter``), and the bytes are queued
/// for export (``SpanExporter``), a sampled-out exchange's not at all.
///
/// It is the exchange's ``ExchangeTraceContext`` on the record (its ids go to
/// log lines, trace records and HAR entries, as hex made when read) and its
/// observation. Called on the exchange's event loop; a lock all the same
/// (a `Mutex` in the object: no allocation of its own), as the record
/// holding it may be read elsewhere.
final class ExchangeSpans: ExchangeTraceContext, ExchangeObservation {
    /// The exchange's place in its trace.
    struct IDs: Sendable {
        var trace: TraceID
        /// The SERVER span.
        var span: SpanID
        /// The client's span (the request's `traceparent`), or nil for a new trace.
        var parent: SpanID?
        /// The request's valid `tracestate`, passed on and exported.
        var traceState: String?
        var sampled: Bool
    }

    /// A CLIENT span's id, with the record's attempt it became and when it was prepared.
    private struct ClientSpan: Sendable {
        var span: SpanID
        var attempt: Int
        var start: ContinuousClock.Instant
    }

    private struct State: Sendable {
        /// The exchange's record until it finishes; then let go, as the record
        /// holds this object (its trace context) and would never be freed.
        var record: ExchangeRecord?
        /// The first CLIENT span, inline (most exchanges make one attempt); the others after it.
        var firstClient: ClientSpan?
        var moreClients: [ClientSpan] = []
        var waits: [RecordedWait] = []
        var finished = false
    }

    /// What ``finish(_:)`` takes from the state.
    private struct Finished: Sendable {
        var record: ExchangeRecord
        var firstClient: ClientSpan?
        var moreClients: [ClientSpan]
        var waits: [RecordedWait]
    }

    let ids: IDs
    private let tracing: ExchangeTracing
    /// The request as routed, its body left out.
    private let request: ProxyRequest
    private let requestID: String
    private let clientAddress: String
    private let started: ContinuousClock.Instant
    private let state: Mutex<State>

    init(tracing: ExchangeTracing, ids: IDs, request: ProxyRequest, context: RequestContext) {
        self.tracing = tracing
        self.ids = ids
        var snapshot = request
        snapshot.body = .empty
        self.request = snapshot
        self.requestID = context.id
        self.clientAddress = context.clientAddress
        self.started = context.startedAt
        self.state = Mutex(State(record: context.record))
    }

    /// The trace: 32 lowercase hex digits, made when read (a log line, a trace record, a HAR entry).
    var traceID: String { ids.trace.hex }

    /// The SERVER span: 16 lowercase hex digits, made when read.
    var spanID: String { ids.span.hex }

    /// Gives the attempt about to be sent its CLIENT span id and points the
    /// attempt's `traceparent` (and `tracestate`) at it. `record`: the exchange's.
    func startAttempt(headers: inout HTTPHeaders, record: ExchangeRecord) {
        let span = TraceIDGenerator.spanID()
        let flags: UInt8 = ids.sampled ? 0x01 : 0x00
        TraceCarrier(traceparent: HexID.traceparent(trace: ids.trace, span: span, flags: flags), tracestate: ids.traceState).write(to: &headers)
        // A sampled-out exchange makes no span: its attempts' ids are passed on, not kept.
        guard ids.sampled else { return }
        // The transport records the attempt right after the last step: the index it gets.
        let client = ClientSpan(span: span, attempt: record.attemptCount, start: .now)
        state.withLock { s in
            if s.firstClient == nil {
                s.firstClient = client
            } else {
                s.moreClients.append(client)
            }
        }
    }

    /// `wait`, its length kept for an event of the SERVER span (of a sampled exchange).
    func timing(_ wait: AttemptWait, as kind: TracedWait) -> AttemptWait {
        guard ids.sampled else { return wait }
        let start = ContinuousClock.now
        return wait.whenEnded { [self] in
            let end = ContinuousClock.now
            state.withLock { $0.waits.append(RecordedWait(kind: kind, start: start, end: end)) }
        }
    }

    /// Whether the sampler records this exchange (else no span is made, the context still passed on).
    var isSampled: Bool { ids.sampled }

    /// The waits timed so far.
    var waits: [RecordedWait] { state.withLock { $0.waits } }

    // MARK: ExchangeObservation

    func requestBodyPart(_ buffer: ByteBuffer) {}

    func finish(_ outcome: ExchangeOutcome) {
        let taken: Finished? = state.withLock { s in
            guard !s.finished, let record = s.record else { return nil }
            s.finished = true
            s.record = nil
            return Finished(record: record, firstClient: s.firstClient, moreClients: s.moreClients, waits: s.waits)
        }
        guard let taken, ids.sampled else { return }
        let clock = WallClock()
        let record = taken.record
        let route = tracing.templates.endpoint(of: request).path
        let plan = SpanPlan(
            SpanPlan.Inputs(
                request: request, route: route, requestID: requestID, clientAddress: clientAddress,
                attempts: record.attempts, retries: record.retries, waits: taken.waits, outcome: outcome, end: clock.now
            ),
            redactor: tracing.redactor
        )
        let name = SpanName(method: request.method, route: route)
        var writer = OTLPSpanWriter(buffer: SpanScratch.take(), clock: clock)
        writer.beginSpan(header(.server, id: ids.span, parent: ids.parent, name: name, start: started, end: plan.serverEnd, clock: clock))
        plan.writeServer(into: &writer)
        writer.endSpan()
        if let first = taken.firstClient {
            write(first, resend: 0, plan: plan, name: name, clock: clock, into: &writer)
            for (offset, client) in taken.moreClients.enumerated() {
                write(client, resend: offset + 1, plan: plan, name: name, clock: clock, into: &writer)
            }
        }
        let count = writer.spanCount
        let spans = writer.takeBuffer()
        tracing.exporter.enqueue(spans, count: count)
        SpanScratch.recycle(spans)
    }

    /// A CLIENT span of this exchange, the `resend`th started.
    private func write(
        _ client: ClientSpan, resend: Int, plan: SpanPlan, name: SpanName, clock: WallClock, into writer: inout OTLPSpanWriter
    ) {
        let end = plan.clientEnd(attempt: client.attempt)
        writer.beginSpan(header(.client, id: client.span, parent: ids.span, name: name, start: client.start, end: end, clock: clock))
        plan.writeClient(resend: resend, attempt: client.attempt, into: &writer)
        writer.endSpan()
    }

    /// A span's header: this exchange's trace, `id`, its times on the wall clock.
    private func header(
        _ kind: SpanKind, id: SpanID, parent: SpanID?, name: SpanName, start: ContinuousClock.Instant, end: ContinuousClock.Instant,
        clock: WallClock
    ) -> SpanHeader {
        SpanHeader(
            kind: kind, traceID: ids.trace, spanID: id, parentID: parent, traceState: ids.traceState, name: name,
            start: clock.timestamp(start), end: clock.timestamp(end)
        )
    }
}
