public import GatewayConfig
import NIOConcurrencyHelpers

/// Long-lived trace writers by file, so a reload keeps the writer (its queue,
/// its drop count and the file's rotation state).
public final class TraceWriterRegistry: Sendable {
    private let writers = NIOLockedValueBox<[String: TraceWriter]>([:])
    /// The last records any of the writers wrote (the admin page's recent exchanges).
    public let recent: RecentTraces

    public init(recent: RecentTraces = RecentTraces()) {
        self.recent = recent
    }

    /// The writer for `trace.file`, created on first use.
    public func writer(for trace: TraceConfig) -> TraceWriter {
        writers.withLockedValue { all in
            if let writer = all[trace.file] { return writer }
            let writer = TraceWriter(file: trace.file, maxFileBytes: trace.maxFileBytes, maxFiles: trace.maxFiles, bufferRecords: trace.bufferRecords, recent: recent)
            all[trace.file] = writer
            return writer
        }
    }

    /// Waits until every writer has written what was queued (graceful shutdown).
    public func flush() async {
        for writer in writers.withLockedValue({ Array($0.values) }) { await writer.flush() }
    }

    /// Records dropped by every writer.
    public var droppedCount: Int { writers.withLockedValue { $0.values.reduce(0) { $0 + $1.droppedCount } } }
}
