import GatewayConfig
import GatewayCore
import GatewayObservability

/// The first observer of every route while tracing is on: it gives the
/// exchange its trace context, as the child of the request's `traceparent`
/// when it has a valid one (else a new trace), sampled as
/// `tracing.sampler` says, and sets it on the exchange's record, where the
/// log lines, the debug trace, the attempt steps and the other observers
/// find it.
///
/// On the event loop: one pass over the field names (the two trace fields
/// read only when there), two random ids at most, one
/// sampling decision; for a sampled exchange, the endpoint template and what
/// the request says of the spans, encoded at once (a few hundred bytes). No
/// span exists until the exchange ends (``ExchangeSpans``).
struct TracingObserver: ExchangeObserver {
    let tracer: GatewayTracer
    let templates: EndpointTemplates
    let redactor: TraceRedactor

    init(tracer: GatewayTracer, config: GatewayConfig) {
        self.tracer = tracer
        self.templates = EndpointTemplates(config: config)
        self.redactor = TraceRedactor.alwaysRedacting(config: config)
    }

    func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        // One pass over the names; the fields read only when one is there.
        let holdsTraceContext = TraceCarrier.mayBeIn(request.headers)
        let incoming = holdsTraceContext ? TraceCarrier.incomingContext(request.headers) : nil
        let parent = incoming?.parent
        let traceID = parent.flatMap { TraceID(hex: $0.traceID) } ?? TraceIDGenerator.traceID()
        let ids = ExchangeSpans.IDs(
            trace: traceID,
            span: TraceIDGenerator.spanID(),
            parent: parent.flatMap { SpanID(hex: $0.parentID) },
            traceState: incoming?.tracestate,
            sampled: tracer.sampler.isSampled(traceID: traceID, parent: parent)
        )
        // What the spans say is looked up only for an exchange that gets them:
        // the request's part encoded now, while the request is at hand.
        var subject: ExchangeSpans.Subject?
        if ids.sampled {
            let route = templates.endpoint(of: request).path
            let target = redactor.redactedTarget(request.target)
            var writer = OTLPSpanWriter.current()
            writer.beginFields()
            SpanPlan.describeServerRequest(
                request, redactedTarget: target, route: route, requestID: context.id, clientAddress: context.clientAddress, into: &writer
            )
            let clientFieldsStart = writer.bytes.count
            SpanPlan.describeClientRequest(request, redactedTarget: target, route: route, into: &writer)
            subject = ExchangeSpans.Subject(
                name: SpanPlan.name(method: request.method, route: route), fields: writer.copyBytes(), clientFieldsStart: clientFieldsStart
            )
            writer.reset()
        }
        let spans = ExchangeSpans(
            exporter: tracer.exporter, ids: ids, subject: subject, context: context, requestHoldsTraceContext: holdsTraceContext
        )
        context.record.trace = spans
        return spans
    }
}
