import GatewayCore
import GatewayObservability
import Testing

@testable import GatewayTracing

/// The tests' ``SpanFieldSink``: what a plan writes for one span, collected
/// as values (the attributes in order, the events, the status) to be checked
/// one by one, or handed to the reference encoder as a ``FinishedSpan``.
struct RecordingSink: SpanFieldSink {
    /// A point in a span's time line, as the plan wrote it.
    struct Event: Sendable, Equatable {
        var name: String
        var at: ContinuousClock.Instant
        var attributes: SpanAttributes
    }

    var attributes = SpanAttributes()
    var events: [Event] = []
    var status: SpanStatus?

    mutating func attribute(_ key: StaticString, string value: String) {
        attributes.append(key.description, .string(value))
    }

    mutating func attribute(_ key: StaticString, string value: Substring) {
        attributes.append(key.description, .string(String(value)))
    }

    mutating func attribute(_ key: StaticString, url value: UpstreamURL) {
        attributes.append(key.description, .string(value.string))
    }

    mutating func attribute(_ key: StaticString, int value: Int64) {
        attributes.append(key.description, .int64(value))
    }

    mutating func attribute(_ key: StaticString, bool value: Bool) {
        attributes.append(key.description, .bool(value))
    }

    mutating func event(_ name: StaticString, at time: ContinuousClock.Instant, duration: Duration, retryReason: String?) {
        var eventAttributes = SpanAttributes()
        eventAttributes.append(SpanPlan.durationKey.description, .double(SpanPlan.milliseconds(duration)))
        if let retryReason { eventAttributes.append(SpanPlan.retryReasonKey.description, .string(retryReason)) }
        events.append(Event(name: name.description, at: time, attributes: eventAttributes))
    }

    mutating func status(_ status: SpanStatus) {
        #expect(self.status == nil, "one status, last")
        self.status = status
    }
}

/// One span as its plan wrote it, and its end.
struct RecordedSpan {
    var attributes: SpanAttributes
    var events: [RecordingSink.Event]
    var status: SpanStatus?
    var end: ContinuousClock.Instant

    init(_ sink: RecordingSink, end: ContinuousClock.Instant) {
        self.attributes = sink.attributes
        self.events = sink.events
        self.status = sink.status
        self.end = end
    }

    /// The span as the gateway once built it, for the reference encoder: `header`'s ids, name and times.
    func finished(_ header: SpanHeader, clock: WallClock) -> FinishedSpan {
        FinishedSpan(
            name: header.name.description, kind: header.kind, traceID: header.traceID, spanID: header.spanID,
            parentID: header.parentID, traceState: header.traceState ?? "", start: header.start, end: header.end,
            attributes: attributes,
            events: events.map { FinishedSpan.Event(name: $0.name, time: clock.timestamp($0.at), attributes: $0.attributes) },
            status: status
        )
    }
}

/// A finished exchange for a plan: its inputs, and for each CLIENT span
/// started, in order, the record's attempt it became (what ``ExchangeSpans``
/// keeps). Its inputs' fields read and set as its own.
@dynamicMemberLookup
struct PlanCase {
    var inputs: SpanPlan.Inputs
    var clientAttempts: [Int]

    subscript<Value>(dynamicMember path: WritableKeyPath<SpanPlan.Inputs, Value>) -> Value {
        get { inputs[keyPath: path] }
        set { inputs[keyPath: path] = newValue }
    }
}

/// Everything a plan writes for an exchange, collected: the SERVER span and
/// each CLIENT span, as ``ExchangeSpans`` has them written.
struct RecordedPlan {
    var server: RecordedSpan
    var clients: [RecordedSpan]

    init(_ exchange: PlanCase, redactor: TraceRedactor) {
        let plan = SpanPlan(exchange.inputs, redactor: redactor)
        var server = RecordingSink()
        plan.writeServer(into: &server)
        self.server = RecordedSpan(server, end: plan.serverEnd)
        self.clients = exchange.clientAttempts.enumerated().map { (resend, attempt) -> RecordedSpan in
            var client = RecordingSink()
            plan.writeClient(resend: resend, attempt: attempt, into: &client)
            return RecordedSpan(client, end: plan.clientEnd(attempt: attempt))
        }
    }
}
