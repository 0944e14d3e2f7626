import GatewayConfig
import Logging
import OTel

extension TracingConfig {
    /// swift-otel's configuration for `tracing`: traces only (no logs, no
    /// metrics: Prometheus has those), OTLP/HTTP with protobuf, W3C trace
    /// context, the batch processor's queue and delay, diagnostics to
    /// `diagnostics` (``ExportDiagnostics``). swift-otel applies the `OTEL_*`
    /// variables once more over it, as ``applyEnvironment(_:file:)`` read them.
    func otelConfiguration(diagnostics: Logger) -> OTel.Configuration {
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.diagnosticLogger = .custom(diagnostics)
        configuration.diagnosticLogLevel = .warning
        configuration.propagators = [.traceContext]
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = endpoint
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.headers = headers.map { ($0.name, $0.value.value) }
        configuration.traces.sampler = otelSampler
        configuration.traces.batchSpanProcessor.scheduleDelay = scheduleDelay
        configuration.traces.batchSpanProcessor.maxQueueSize = maxQueue
        configuration.traces.batchSpanProcessor.maxExportBatchSize = min(maxQueue, 512)
        return configuration
    }

    /// The sampler. `always_off` is a ratio of 0: swift-otel's always-off
    /// sampler makes no span context at all, so nothing would be propagated,
    /// where a ratio of 0 samples nothing and still passes the trace on.
    var otelSampler: OTel.Configuration.TracesConfiguration.SamplerConfiguration {
        switch sampler {
        case .alwaysOn: .alwaysOn
        case .alwaysOff: .traceIDRatio(ratio: 0) ?? .alwaysOn
        case .traceIDRatio: .traceIDRatio(ratio: samplerRatio) ?? .alwaysOn
        case .parentBasedAlwaysOn: .parentBasedAlwaysOn
        case .parentBasedAlwaysOff: .parentBasedAlwaysOff
        case .parentBasedTraceIDRatio: .parentBasedTraceIDRatio(ratio: samplerRatio) ?? .parentBasedAlwaysOn
        }
    }
}
