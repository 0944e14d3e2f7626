import Logging
import NIOConcurrencyHelpers

/// swift-otel's diagnostic log, as the gateway gives it to the exporter. Its
/// batch span processor reports what it drops only there, as warnings: spans
/// beyond the queue ("Spans were dropped ... because queue was full",
/// `dropped_count`) and batches the collector did not take ("Failed to export
/// batch.", `batch_size`). This handler counts both in
/// `gateway_trace_spans_dropped_total{reason}` (`queue_full`,
/// `export_failed`), whatever level the log is at, and passes the warnings on
/// to the gateway's log: an export failure at most once a minute (a stopped
/// collector fails every batch), never a value an environment variable held
/// (swift-otel names its overrides with their values: headers hold API keys).
///
/// swift-otel 1.6.0's wording: `ExportDiagnosticsTests` pins it.
struct ExportDiagnostics: LogHandler {
    static let queueFullMessage = "Spans were dropped this iteration because queue was full"
    static let exportFailedMessage = "Failed to export batch."
    /// Metadata swift-otel attaches that may hold a secret: never passed on.
    static let withheldKeys: Set<String> = ["environment_value", "previous_value", "new_value", "carrier"]
    static let failureLogInterval: Duration = .seconds(60)

    let target: Logger
    let dropped: @Sendable (_ reason: String, _ count: Int) -> Void
    let failures: ExportFailureLog
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(target: Logger, failures: ExportFailureLog = ExportFailureLog(), dropped: @escaping @Sendable (_ reason: String, _ count: Int) -> Void) {
        self.target = target
        self.failures = failures
        self.dropped = dropped
    }

    /// Warnings and worse, whatever swift-otel sets (`OTEL_LOG_LEVEL` too):
    /// the drops must be counted.
    var logLevel: Logger.Level {
        get { .warning }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var fields = metadata
        for (key, value) in event.metadata ?? [:] { fields[key] = value }
        let message = event.message.description
        switch message {
        case Self.queueFullMessage:
            let count = fields["dropped_count"].flatMap { Int($0.description) } ?? 1
            dropped("queue_full", count)
        case Self.exportFailedMessage:
            let count = fields["batch_size"].flatMap { Int($0.description) } ?? 1
            dropped("export_failed", count)
            guard let suppressed = failures.shouldLog(count: count, now: .now, interval: Self.failureLogInterval) else { return }
            if suppressed > 0 { fields["dropped_since_last_line"] = .string(String(suppressed)) }
        default:
            break
        }
        for key in Self.withheldKeys where fields[key] != nil { fields[key] = "<not shown>" }
        if let error = event.error { fields["error"] = .string("\(error)") }
        target.log(level: event.level, "tracing: \(message)", metadata: fields, source: "swift-otel", file: event.file, function: event.function, line: event.line)
    }
}

/// When export failures were last logged, and the spans dropped since.
final class ExportFailureLog: Sendable {
    private typealias State = (last: ContinuousClock.Instant?, dropped: Int)
    private let state = NIOLockedValueBox<State>((nil, 0))

    /// Nil while a failure was logged less than `interval` ago (the `count`
    /// spans then wait for the next line); else the spans dropped since the
    /// last line, before these.
    func shouldLog(count: Int, now: ContinuousClock.Instant, interval: Duration) -> Int? {
        state.withLockedValue { (s: inout State) -> Int? in
            if let last = s.last, now - last < interval {
                s.dropped += count
                return nil
            }
            let earlier = s.dropped
            s = (now, 0)
            return earlier
        }
    }
}
