import GatewayCore
import GatewayObservability
import NIOCore
import NIOHTTP1
import Synchronization

/// One traced exchange: the ids of the gateway's SERVER span, given as the
/// exchange begins (``TracingObserver``), and of a CLIENT span per upstream
/// attempt, given as the attempt is prepared (``TracePropagationStep``) so
/// that its id is the upstream's parent. No span exists on the way: when the
/// exchange finishes, ``SpanPlan`` (from the record) says the rest of their
/// attributes and events, and they are encoded as it says them
/// (``OTLPSpanWriter``), after what the request said of them (encoded as the
/// exchange began, ``Subject``), and queued for export (``SpanExporter``), a
/// sampled-out exchange's not at all.
///
/// It is the exchange's ``ExchangeTraceContext`` on the record (its ids go to
/// log lines, trace records and HAR entries) and its observation. Called on
/// the exchange's event loop; a lock all the same, as the record holding it
/// may be read elsewhere.
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

    /// A CLIENT span's id, with the record's attempt it became and when it was
    /// prepared. A struct, not a tuple: a list of tuples is copied through
    /// the runtime's generic tuple witnesses.
    struct Client: Sendable {
        var span: SpanID
        var attempt: Int
        /// When it was prepared (kept by value: ``StoredInstant``).
        var started: StoredInstant
    }

    /// What ``finish(_:)`` takes of the state, once.
    private struct Taken {
        var record: ExchangeRecord
        var clients: SmallList<Client>
        var waits: [RecordedWait]
    }

    private struct State {
        /// The exchange's record until it finishes; then let go, as the record
        /// holds this object (its trace context) and would never be freed.
        var record: ExchangeRecord?
        var clients = SmallList<Client>()
        var waits: [RecordedWait] = []
        var finished = false
        /// The request's fields may hold a `traceparent` or `tracestate`: the
        /// client's, or one an earlier attempt wrote (attempts edit one request).
        var fieldsMayHoldTraceContext: Bool
    }

    /// Made when read (a log line, a trace record), not per exchange: `ids` never changes.
    var traceID: String { ids.trace.hex }
    var spanID: String { ids.span.hex }
    let ids: IDs
    /// What a sampled exchange's spans are made from, besides its record;
    /// nil for an exchange the sampler left out (it only passes its context on).
    struct Subject: Sendable {
        /// The span name (`GET /users/{id}`).
        var name: String
        /// What the request says of the spans, encoded as it began
        /// (``SpanPlan/describeServerRequest(_:redactedTarget:route:requestID:clientAddress:into:)``,
        /// then from `clientFieldsStart` on ``SpanPlan/describeClientRequest(_:redactedTarget:route:into:)``).
        var fields: [UInt8]
        var clientFieldsStart: Int
    }

    private let exporter: SpanExporter
    private let subject: Subject?
    private let started: StoredInstant
    private let state: Mutex<State>

    /// `subject`: nil when `ids` is not sampled. `requestHoldsTraceContext`:
    /// the request has a `traceparent` or `tracestate` field (``TraceCarrier/mayBeIn(_:)``).
    init(exporter: SpanExporter, ids: IDs, subject: Subject?, context: RequestContext, requestHoldsTraceContext: Bool) {
        self.exporter = exporter
        self.ids = ids
        self.subject = subject
        self.started = context.started
        self.state = Mutex(State(record: context.record, fieldsMayHoldTraceContext: requestHoldsTraceContext))
    }

    /// Gives the attempt about to be sent its CLIENT span id and points the
    /// attempt's `traceparent` (and `tracestate`) at it. `record`: the exchange's.
    func startAttempt(headers: inout RequestFields, record: ExchangeRecord) {
        let span = TraceIDGenerator.spanID()
        let flags: UInt8 = ids.sampled ? 0x01 : 0x00
        // A sampled attempt's span is remembered (an unsampled one makes none), in the same lock.
        // The transport records the attempt right after the last step: the index it gets.
        let client = ids.sampled ? Client(span: span, attempt: record.attemptCount, started: .now) : nil
        let replacing = state.withLock { s in
            if let client { s.clients.append(client) }
            defer { s.fieldsMayHoldTraceContext = true }
            return s.fieldsMayHoldTraceContext
        }
        TraceCarrier(traceparent: HexID.traceparent(trace: ids.trace, span: span, flags: flags), tracestate: ids.traceState)
            .write(to: &headers, replacing: replacing)
    }

    /// `wait`, its length kept for an event of the SERVER span.
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
        let taken = state.withLock { (s: inout State) -> Taken? in
            guard !s.finished, let record = s.record else { return nil }
            s.finished = true
            s.record = nil
            return Taken(record: record, clients: s.clients, waits: s.waits)
        }
        guard let taken, let subject else { return }
        let ending = SpanPlan.Ending(
            attempts: taken.record.attempts, retries: taken.record.retries, waits: taken.waits,
            clientAttempts: taken.clients.mapSmall { $0.attempt }, outcome: outcome, end: StoredInstant.now
        )
        let writer = OTLPSpanWriter.current()
        var sink = ExportSink(
            writer: writer, ids: ids, subject: subject, started: started, clients: taken.clients, clock: WallClock(now: ending.end)
        )
        SpanPlan.describe(ending, into: &sink)
        exporter.enqueue(writer.bytes, spans: writer.count)
    }
}
