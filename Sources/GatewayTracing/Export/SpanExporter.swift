import GatewayCore
import GatewayConfig
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// The export pipeline: finished spans, encoded as their exchange ends
/// (``OTLPSpanWriter``), queue (``SpanExportQueue``) and are sent from one
/// background event loop, every `tracing.schedule_delay` or as soon as
/// `maxBatch` wait, in requests of at most `maxBatch` spans
/// (``OTLPSpanEncoder``, ``OTLPExporter`` through the upstream pool), one at a time. Spans that do
/// not fit the queue are counted as `queue_full`; spans the collector did not
/// take (an error, a timeout, a status other than 2xx) as `export_failed`,
/// logged at most once a minute (``ExportFailureLog``). Nothing here runs on
/// a request's event loop but ``enqueue(_:)``.
final class SpanExporter: Sendable {
    /// The most spans in one request, and how many waiting start one early.
    static let maxBatch = 512
    static let failureLogInterval: Duration = .seconds(60)

    let queue: SpanExportQueue
    let eventLoop: any EventLoop
    private let encoder: OTLPSpanEncoder
    private let exporter: OTLPExporter
    private let scheduleDelay: TimeAmount
    private let dropped: @Sendable (_ reason: String, _ count: Int) -> Void
    private let failures = ExportFailureLog()
    private let logger: Logger
    /// The export under way, if any: on `eventLoop`.
    private let running: NIOLoopBoundBox<EventLoopFuture<Void>?>
    private let timer = NIOLockedValueBox<RepeatedTask?>(nil)

    /// Throws when `tracing.endpoint` is not a URL (the config's validation lets none through).
    init(
        config: TracingConfig, eventLoop: any EventLoop, logger: Logger,
        dropped: @escaping @Sendable (_ reason: String, _ count: Int) -> Void,
        transport: any UpstreamTransport
    ) throws {
        guard let endpoint = OTLPEndpoint(config.effectiveEndpoint) else { throw ExportSetupError(endpoint: config.endpoint) }
        self.queue = SpanExportQueue(capacity: config.maxQueue, batchSize: Self.maxBatch)
        self.eventLoop = eventLoop
        self.encoder = OTLPSpanEncoder(serviceName: config.serviceName)
        self.exporter = OTLPExporter(
            endpoint: endpoint, exportProtocol: config.exportProtocol, headers: config.headers.map { ($0.name, $0.value.value) },
            tls: config.tls, transport: transport, eventLoop: eventLoop)
        self.scheduleDelay = TimeAmount(config.scheduleDelay)
        self.dropped = dropped
        self.logger = logger
        self.running = NIOLoopBoundBox.makeEmptyBox(valueType: EventLoopFuture<Void>.self, eventLoop: eventLoop)
    }

    /// Starts the schedule.
    func start() {
        let task = eventLoop.scheduleRepeatedTask(initialDelay: scheduleDelay, delay: scheduleDelay) { [self] _ in
            _ = flush()
        }
        timer.withLockedValue { $0 = task }
    }

    /// Queues an exchange's `spans` spans, encoded in `encoded`; on the exchange's event loop.
    func enqueue(_ encoded: UnsafeRawBufferPointer, spans: Int) {
        let (refused, batchReady) = queue.enqueue(encoded, spans: spans)
        if refused > 0 { dropped("queue_full", refused) }
        if batchReady { eventLoop.execute { [self] in _ = flush() } }
    }

    /// Sends what waits, unless an export is under way (which sends what
    /// waits after it, once `maxBatch` wait). On `eventLoop`.
    func flush() -> EventLoopFuture<Void> {
        if let current = running.value { return current }
        let batches = queue.takeAll()
        guard !batches.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        let done = send(batches, from: batches.startIndex)
        running.value = done
        done.whenComplete { [self] _ in
            running.value = nil
            if queue.count >= Self.maxBatch { _ = flush() }
        }
        return done
    }

    /// Stops the schedule and sends everything queued, within `timeout`;
    /// what could not be sent by then is counted as `export_failed`.
    func shutdown(within timeout: Duration) async {
        timer.withLockedValue { $0?.cancel() }
        let drained = eventLoop.makePromise(of: Void.self)
        eventLoop.flatSubmit { [self] in drain() }.cascade(to: drained)
        let deadline = eventLoop.scheduleTask(in: TimeAmount(timeout)) { drained.succeed(()) }
        try? await drained.futureResult.get()
        deadline.cancel()
        try? await eventLoop.submit { [self] in
            let left = queue.takeAll().reduce(0) { $0 + $1.spans }
            if left > 0 { dropped("export_failed", left) }
        }.get()
    }

    /// Flushes until nothing waits.
    private func drain() -> EventLoopFuture<Void> {
        flush().flatMap { [self] in queue.count > 0 || running.value != nil ? drain() : eventLoop.makeSucceededVoidFuture() }
    }

    /// `batches` from `index` on, one request each. After a failure the
    /// rest are not tried (a collector that is down would time out again).
    private func send(_ batches: [SpanExportQueue.Batch], from index: Int) -> EventLoopFuture<Void> {
        guard index < batches.endIndex else { return eventLoop.makeSucceededVoidFuture() }
        let body = encoder.encode(spans: batches[index].bytes)
        return exporter.send(body).flatMap { [self] in
            send(batches, from: index + 1)
        }.flatMapError { [self] error in
            failed(batches[index...].reduce(0) { $0 + $1.spans }, error: error)
            return eventLoop.makeSucceededVoidFuture()
        }
    }

    private func failed(_ count: Int, error: any Error) {
        dropped("export_failed", count)
        guard let earlier = failures.shouldLog(count: count, now: .now, interval: Self.failureLogInterval) else { return }
        var metadata: Logger.Metadata = [
            "collector": "\(exporter.collector)", "error": "\(error)", "spans": "\(count)",
        ]
        if earlier > 0 { metadata["dropped_since_last_line"] = "\(earlier)" }
        logger.warning("tracing: spans not exported: the collector did not take them", metadata: metadata)
    }
}

/// A `tracing.endpoint` the exporter cannot read (the config's validation lets none through).
struct ExportSetupError: Error, CustomStringConvertible {
    let endpoint: String

    var description: String { "not an http:// or https:// URL: \(endpoint.contains("@") ? "<not shown>" : TracingConfig.shownEndpoint(endpoint))" }
}
