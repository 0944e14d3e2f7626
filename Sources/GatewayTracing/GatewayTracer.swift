public import GatewayConfig
public import GatewayCore
public import GatewayObservability
public import Logging
import NIOConcurrencyHelpers
import OTel
public import ServiceLifecycle
import Tracing

/// Tracing while `tracing` is on: swift-otel's tracer with its batch span
/// processor and OTLP/HTTP exporter, and what the routes add for it
/// (``ExchangePhases`` in the app lists them in their place): the first
/// observer (``TracingObserver``), the last attempt step
/// (``TracePropagationStep``) and the rate-limit and token steps' waits timed
/// (``WaitTimingStep``). Made once at start (the config's `tracing` at start
/// applies until a restart); ``service`` runs the export under the gateway's
/// service group and flushes what is queued when it shuts down.
///
/// The request path only starts spans, reads their ids back and, at the
/// exchange's end, gives them their attributes and ends them: batching,
/// encoding and sending run in swift-otel's tasks, off the event loops, the
/// queue bounded by `tracing.max_queue` (the excess dropped and counted in
/// `gateway_trace_spans_dropped_total`). A collector that is down or slow
/// costs requests nothing.
public final class GatewayTracer: Sendable {
    private let tracer: any Tracer
    /// The tracer's export (tracer, processor, exporter), as one service.
    public let service: any Service

    init(tracer: any Tracer, service: any Service) {
        self.tracer = tracer
        self.service = service
    }

    /// Every tracer started, kept for the life of the process. swift-otel's
    /// HTTP exporter shuts its client down synchronously when it is freed,
    /// which traps on an event loop thread, and the last holder of a tracer
    /// may be an exchange freed on one. The export service shuts the client
    /// down itself when the gateway stops.
    private static let keptAlive = NIOLockedValueBox<[any Tracer]>([])

    /// Starts tracing as `config` says (its `OTEL_*` variables already
    /// applied); `metrics` counts the spans dropped, `logger` gets the
    /// exporter's warnings. Throws what swift-otel refuses (a certificate
    /// file it cannot read).
    public static func start(config: TracingConfig, metrics: GatewayMetrics, logger: Logger) throws -> GatewayTracer {
        let diagnostics = Logger(label: "swift-otel") { _ in
            ExportDiagnostics(target: logger) { reason, count in metrics.traceSpansDropped(reason: reason, count: count) }
        }
        let backend = try OTel.makeTracingBackend(configuration: config.otelConfiguration(diagnostics: diagnostics))
        keptAlive.withLockedValue { $0.append(backend.factory) }
        let sampler = config.sampler.rawValue + (config.sampler.usesRatio ? " \(config.samplerRatio)" : "")
        logger.info("tracing on: spans to \(config.endpoint) (OTLP/HTTP), service.name \(config.serviceName), sampler \(sampler)")
        return GatewayTracer(tracer: backend.factory, service: TracingService(export: backend.service, logger: logger))
    }

    /// The observer that starts every exchange's SERVER span: the first of each route of `config`.
    public func observer(config: GatewayConfig) -> any ExchangeObserver {
        TracingObserver(tracer: tracer, config: config)
    }

    /// The attempt step that starts each attempt's CLIENT span and points the
    /// upstream's `traceparent` at it: the last of each route.
    public var propagation: any AttemptStep { TracePropagationStep() }

    /// `step`, its waits (of `kind`) shown as events of the exchange's span.
    public func timingWaits(of step: any AttemptStep, as kind: TracedWait) -> any AttemptStep {
        WaitTimingStep(wrapped: step, kind: kind)
    }
}

/// swift-otel's export service under the gateway's service group: it runs
/// until the gateway shuts down, then flushes what is queued (the group shuts
/// it down last: it is listed first). Its failure is logged, never the
/// gateway's end.
struct TracingService: Service {
    let export: any Service
    let logger: Logger

    func run() async throws {
        do {
            try await export.run()
        } catch {
            logger.error("tracing: the span export stopped: \(error)")
        }
        // Until the gateway shuts down, should the export have ended first.
        try? await gracefulShutdown()
    }
}
