public import Logging

/// Per-exchange context handed through the policies to the upstream pool.
public struct RequestContext: Sendable {
    /// A short unique id for logs and traces.
    public let id: String
    /// The client's address as `ip:port`.
    public let clientAddress: String
    /// When the exchange began.
    public var startedAt: ContinuousClock.Instant { started.instant }
    /// ``startedAt`` as kept: by value (``StoredInstant``).
    public let started: StoredInstant
    /// The logger as given (the gateway's), without the request's id.
    public var baseLogger: Logger {
        // Another logger may log elsewhere: the exchange line goes to it as an event.
        didSet { exchangeLines = nil }
    }
    /// Where the exchange's info line goes as values (``ExchangeLine``):
    /// ``baseLogger``'s sink, found where that logger was made
    /// (``ExchangeLineSink/init(_:)``), not per request; nil when its handler
    /// is not the gateway's own, and once ``baseLogger`` is replaced (the
    /// line then goes as a swift-log event).
    public private(set) var exchangeLines: ExchangeLineSink?
    /// Whether the exchange's info line is logged: the sink's level when the
    /// handler is the gateway's own (no logger copied, no level read through
    /// it), else ``baseLogger``'s.
    public var logsExchangeLine: Bool {
        exchangeLines.map { $0.logsInfo } ?? (baseLogger.logLevel <= .info)
    }
    /// Whether ``logger`` tags each line with `request=<id>` (the listener's contexts do).
    public let tagsLinesWithID: Bool
    /// Attempts and timings, recorded as the exchange proceeds.
    public let record: ExchangeRecord

    /// - Parameters:
    ///   - tagsLinesWithID: ``logger`` adds `request=<id>` to every line.
    ///   - exchangeLines: `logger`'s sink (``ExchangeLineSink/init(_:)``, found
    ///     once where `logger` was made), or nil: the exchange line goes as an event.
    public init(
        id: String,
        clientAddress: String,
        startedAt: ContinuousClock.Instant = .now,
        logger: Logger,
        exchangeLines: ExchangeLineSink? = nil,
        record: ExchangeRecord = ExchangeRecord(),
        tagsLinesWithID: Bool = false
    ) {
        assert(exchangeLines?.belongs(to: logger) ?? true, "an exchange line sink of another logger")
        self.id = id
        self.clientAddress = clientAddress
        self.started = StoredInstant(startedAt)
        self.baseLogger = logger
        self.exchangeLines = exchangeLines
        self.record = record
        self.tagsLinesWithID = tagsLinesWithID
    }

    /// The logger for this request's lines: ``baseLogger``, with `request=<id>`
    /// when ``tagsLinesWithID``, and `trace_id` and `span_id` while tracing is
    /// on (the record's ``ExchangeRecord/trace``). Built when read, not per
    /// request (a logger with its own metadata costs three allocations, and most exchanges
    /// log only their own line, tagged by ``addRequestMetadata(to:)``): read it where
    /// a line is logged, not to keep.
    public var logger: Logger {
        get {
            let trace = record.trace
            guard tagsLinesWithID || trace != nil else { return baseLogger }
            var logger = baseLogger
            if tagsLinesWithID { logger[metadataKey: "request"] = .string(id) }
            if let trace {
                logger[metadataKey: "trace_id"] = .string(trace.traceID)
                logger[metadataKey: "span_id"] = .string(trace.spanID)
            }
            return logger
        }
        set { baseLogger = newValue }
    }

    /// The metadata ``logger`` adds to each line (`request=<id>`, the trace's
    /// `trace_id` and `span_id`, or none), for a line logged through
    /// ``baseLogger`` with metadata of its own.
    public func addRequestMetadata(to metadata: inout Logger.Metadata) {
        if tagsLinesWithID { metadata["request"] = .string(id) }
        if let trace = record.trace {
            metadata["trace_id"] = .string(trace.traceID)
            metadata["span_id"] = .string(trace.spanID)
        }
    }
}
