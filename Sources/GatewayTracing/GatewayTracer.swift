public import GatewayConfig
public import GatewayCore
public import GatewayObservability
public import Logging
import NIOCore
import NIOPosix
public import ServiceLifecycle

/// Tracing while `tracing` is on: the gateway's own W3C trace context, sampler
/// and OTLP export (over HTTP or gRPC, through the upstream pool), and what the routes add for it (``ExchangePhases``
/// in the app lists them in their place): the first observer
/// (``TracingObserver``), the last attempt step (``TracePropagationStep``)
/// and the rate-limit and token steps' waits timed (``WaitTimingStep``).
/// Made once at start (the config's `tracing` at start applies until a
/// restart); ``service`` runs under the gateway's service group and, when it
/// shuts down, sends what is queued.
///
/// The request path makes ids (``TraceIDGenerator``, no lock) and, at the
/// exchange's end, its spans encoded at once (``OTLPSpanWriter``) and queued
/// with one lock (``SpanExporter``): sending runs on the exporter's own event
/// loop, the queue bounded by `tracing.max_queue` (the excess dropped and
/// counted in `gateway_trace_spans_dropped_total`). A collector that is down
/// or slow costs requests nothing.
public final class GatewayTracer: Sendable {
    let sampler: TraceSampler
    let exporter: SpanExporter
    /// The export's schedule and its last flush, as one service.
    public let service: any Service

    /// The tracer exporting from `eventLoop` (the tests': nothing scheduled until ``SpanExporter/start()``).
    init(
        config: TracingConfig, eventLoop: any EventLoop, logger: Logger, dropped: @escaping @Sendable (String, Int) -> Void,
        transport: any UpstreamTransport, group: MultiThreadedEventLoopGroup? = nil
    ) throws {
        let exporter = try SpanExporter(config: config, eventLoop: eventLoop, logger: logger, dropped: dropped, transport: transport)
        self.sampler = TraceSampler(config: config)
        self.exporter = exporter
        self.service = TracingService(exporter: exporter, group: group)
    }

    /// Starts tracing as `config` says (its `OTEL_*` variables already
    /// applied): the export on a thread of its own; `metrics` counts the
    /// spans dropped, `logger` gets the export's warnings. Throws what the
    /// exporter refuses (an endpoint it cannot read).
    /// `transport`: the upstream pool, which carries the exports (OTLP/HTTP and OTLP/gRPC alike).
    public static func start(
        config: TracingConfig, metrics: GatewayMetrics, logger: Logger, transport: any UpstreamTransport
    ) throws -> GatewayTracer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let tracer: GatewayTracer
        do {
            tracer = try GatewayTracer(
                config: config, eventLoop: group.next(), logger: logger,
                dropped: { reason, count in metrics.traceSpansDropped(reason: reason, count: count) }, transport: transport, group: group
            )
        } catch {
            group.shutdownGracefully { _ in }
            throw error
        }
        tracer.exporter.start()
        let sampler = config.sampler.rawValue + (config.sampler.usesRatio ? " \(config.samplerRatio)" : "")
        let how = config.exportProtocol == .grpc ? "OTLP/gRPC" : "OTLP/HTTP"
        logger.info("tracing on: spans to \(TracingConfig.shownEndpoint(config.effectiveEndpoint)) (\(how)), service.name \(config.serviceName), sampler \(sampler)")
        return tracer
    }

    /// The observer that starts every exchange's trace context: the first of each route of `config`.
    public func observer(config: GatewayConfig) -> any ExchangeObserver {
        TracingObserver(tracer: self, config: config)
    }

    /// The attempt step that gives each attempt its CLIENT span's id and
    /// points the upstream's `traceparent` at it: the last of each route.
    public var propagation: any AttemptStep { TracePropagationStep() }

    /// `step`, its waits (of `kind`) shown as events of the exchange's span.
    public func timingWaits(of step: any AttemptStep, as kind: TracedWait) -> any AttemptStep {
        WaitTimingStep(wrapped: step, kind: kind)
    }
}

/// The export under the gateway's service group: it waits for the gateway to
/// shut down, then sends what is queued (within 10 s) and stops the export's
/// thread. The group shuts it down last (it is listed first), so the spans of
/// the exchanges the proxy drains are sent too. Never the gateway's end.
struct TracingService: Service {
    static let flushTimeout: Duration = .seconds(10)

    let exporter: SpanExporter
    let group: MultiThreadedEventLoopGroup?

    func run() async throws {
        try? await gracefulShutdown()
        await exporter.shutdown(within: Self.flushTimeout)
        try? await group?.shutdownGracefully()
    }
}
