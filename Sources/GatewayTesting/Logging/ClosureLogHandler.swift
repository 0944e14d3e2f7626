public import Logging

/// A log handler for tests: each event, with the logger's metadata merged
/// with the event's own, goes to a closure (to capture lines, threads, levels).
public struct ClosureLogHandler: LogHandler {
    public var logLevel: Logger.Level = .trace
    public var metadata: Logger.Metadata = [:]
    private let onLog: @Sendable (LogEvent, Logger.Metadata) -> Void

    public init(_ onLog: @escaping @Sendable (_ event: LogEvent, _ metadata: Logger.Metadata) -> Void) {
        self.onLog = onLog
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        onLog(event, all)
    }
}
