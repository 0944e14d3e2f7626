#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
public import Logging

/// Where a logger's exchange lines go as values (``ExchangeLine``) instead of
/// swift-log events: the queue of its handler, when that handler is the
/// gateway's own (``GatewayLogHandler``) and its lines would carry nothing
/// but the line's own keys (no metadata of the handler's, no metadata
/// provider: the gateway's loggers). Found once for a logger, where the
/// logger is made (a listener's), not per request (a dynamic cast of the
/// handler, and the logger's level read through it); a ``RequestContext``
/// carries it beside its logger. Nil for any other logger: its exchange
/// lines go as events, as to any handler.
public struct ExchangeLineSink: Sendable {
    let queue: LogLineQueue
    let label: String
    /// Whether the logger writes info lines: its level, read once (the
    /// gateway's level is set where its loggers are made; a context whose
    /// logger is replaced drops its sink).
    public let logsInfo: Bool

    /// `logger`'s sink, or nil when its lines must go as events.
    public init?(_ logger: Logger) {
        guard let handler = logger.handler as? GatewayLogHandler, handler.metadata.isEmpty, handler.metadataProvider == nil else {
            return nil
        }
        self.queue = handler.queue
        self.label = handler.label
        self.logsInfo = logger.logLevel <= .info
    }

    /// Queues `line` (at info level: check ``logsInfo`` first), written by
    /// the writer thread in order with the handler's other lines.
    public func log(_ line: ExchangeLine) {
        queue.enqueue(.exchange(line, label: label, second: time(nil)))
    }

    /// Whether this is `logger`'s sink (its handler's queue and label).
    func belongs(to logger: Logger) -> Bool {
        guard let handler = logger.handler as? GatewayLogHandler else { return false }
        return handler.queue === queue && handler.label == label
    }
}
