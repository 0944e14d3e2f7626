import GatewayConfig
import GatewayObservability

/// What the spans of every exchange of one config share, made once with its
/// observer (``TracingObserver``): the exporter their spans go to, the
/// endpoint templates that name them and the redactor of their URLs. Each
/// ``ExchangeSpans`` holds it by one reference, read when the exchange
/// finishes (and only if it is sampled): nothing of it is copied per exchange.
final class ExchangeTracing: Sendable {
    let exporter: SpanExporter
    let templates: EndpointTemplates
    let redactor: TraceRedactor

    init(exporter: SpanExporter, config: GatewayConfig) {
        self.exporter = exporter
        self.templates = EndpointTemplates(config: config)
        self.redactor = TraceRedactor.alwaysRedacting(config: config)
    }
}
