import GatewayConfig
import GatewayCore
import GatewayObservability
import Tracing

/// The first observer of every route while tracing is on: it starts the
/// exchange's SERVER span, as the child of the request's `traceparent` when it
/// has a valid one (else the root of a new trace, as the sampler decides),
/// and sets the exchange's trace context on its record, where the log lines,
/// the debug trace, the attempt steps and the other observers find it.
///
/// On the event loop: reading the two trace fields, one span started, one
/// context read back. The span's attributes are made when it ends.
struct TracingObserver: ExchangeObserver {
    let tracer: any Tracer
    let templates: EndpointTemplates
    let redactor: TraceRedactor

    init(tracer: any Tracer, config: GatewayConfig) {
        self.tracer = tracer
        self.templates = EndpointTemplates(config: config)
        self.redactor = TraceRedactor.alwaysRedacting(config: config)
    }

    func begin(_ request: ProxyRequest, context: RequestContext) -> any ExchangeObservation {
        let route = templates.endpoint(of: request).path
        let name = SpanPlan.name(method: request.method, route: route)
        var parent = InstrumentationContext.topLevel
        if let incoming = TraceCarrier.incoming(request.headers) {
            tracer.extract(incoming, into: &parent, using: TraceCarrierExtractor())
        }
        let server = tracer.startSpan(name, context: parent, ofKind: .server, at: WallClock().timestamp(context.startedAt))
        var own = TraceCarrier()
        tracer.inject(server.context, into: &own, using: TraceCarrierInjector())
        guard let value = own.traceparent, let ids = TraceParent(parsing: value) else {
            server.end()
            return UntracedObservation.shared
        }
        let spans = ExchangeSpans(
            tracer: tracer, server: server, ids: ids, name: name, route: route, request: request, context: context, redactor: redactor
        )
        context.record.trace = spans
        return spans
    }
}
