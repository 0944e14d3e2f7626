import GatewayCore
import Logging
import NIOHTTP1

/// The one info line per exchange: method, target without query values, status,
/// duration, bytes (and the trace's `trace_id` and `span_id` while tracing is
/// on, ``RequestContext/addRequestMetadata(to:)``). Never a header value, never a query value; a control or
/// bidi character of the target (C1 `\u{9B}`, U+202E) as a visible escape,
/// never as it is (``TerminalSafety``).
///
/// Two ways, one line: to the gateway's own log handler the line goes as
/// values (``ExchangeLine``, through the context's ``ExchangeLineSink``),
/// formatted on the log writer thread; to any other handler as a swift-log
/// event with the line's keys as its metadata (``logEvent(_:_:)``).
/// Both write the same bytes (``LoggedText`` for the values).
enum ExchangeLogLine {
    /// The line's `[source]` for the typed line: the module swift-log names as
    /// the source of an event logged in this file (`GatewayListener`), as it
    /// derives it (`#fileID` up to its first `/`).
    static let source: String = {
        let fileID = #fileID
        guard let slash = fileID.utf8.firstIndex(of: UInt8(ascii: "/")) else { return "n/a" }
        return String(fileID[..<slash])
    }()

    /// `target` is only taken (and a routed URL only joined, on the writer
    /// thread) when the line is logged (not at warning level).
    static func log(
        _ context: RequestContext,
        method: HTTPMethod,
        target: @autoclosure () -> ExchangeLine.Target,
        status: Int,
        started: ContinuousClock.Instant,
        bytesIn: Int,
        bytesOut: Int,
        upstream: String?,
        error: GatewayError.Code?,
        injected: String? = nil
    ) {
        guard context.logsExchangeLine else { return }
        var line = line(
            context, method: method, target: target(), status: status, milliseconds: milliseconds(since: started),
            bytesIn: bytesIn, bytesOut: bytesOut, upstream: upstream, error: error
        )
        line.injected = injected
        if let sink = context.exchangeLines {
            sink.log(line)
        } else {
            logEvent(context, line)
        }
    }

    /// The exchange's duration so far, as `ms=` gives it (before rounding).
    static func milliseconds(since started: ContinuousClock.Instant) -> Double {
        (ContinuousClock.now - started).seconds * 1000
    }

    /// The line as values, for the sink: a few retains (the id, the URL's
    /// parts, the trace context), nothing formatted.
    static func line(
        _ context: RequestContext,
        method: HTTPMethod,
        target: ExchangeLine.Target,
        status: Int,
        milliseconds: Double,
        bytesIn: Int,
        bytesOut: Int,
        upstream: String?,
        error: GatewayError.Code?
    ) -> ExchangeLine {
        ExchangeLine(
            requestID: context.tagsLinesWithID ? context.id : nil, method: method, target: target, status: status,
            milliseconds: milliseconds, bytesIn: bytesIn, bytesOut: bytesOut, upstream: upstream, error: error,
            trace: context.record.trace, source: source
        )
    }

    /// The line as a swift-log event, for any other handler: logged through
    /// the context's base logger, its `request=<id>` among the line's own
    /// metadata: the same line as through `context.logger`, without building
    /// a tagged logger per request.
    static func logEvent(_ context: RequestContext, _ line: ExchangeLine) {
        let logger = context.baseLogger
        // Each value a `.string` as `"\(value)"` made it, without interpolation
        // (`String(status)` is also the message's); the status text made once.
        let code = String(line.status)
        // Room for every key (`trace_id` and `span_id` while tracing is on): one allocation, never a resize.
        var metadata = Logger.Metadata(minimumCapacity: 9)
        metadata["status"] = .string(code)
        metadata["ms"] = .string(LoggedText.hundredthsText(line.milliseconds))
        metadata["bytes_in"] = .string(String(line.bytesIn))
        metadata["bytes_out"] = .string(String(line.bytesOut))
        if let upstream = line.upstream { metadata["upstream"] = .string(upstream) }
        if let error = line.error { metadata["error"] = .string(error.rawValue) }
        if let injected = line.injected { metadata["injected"] = .string(injected) }
        context.addRequestMetadata(to: &metadata)
        // `METHOD url status` in a string sized once (interpolation regrows it as it goes).
        let name = LoggedText.text(of: line.method)
        let target = LoggedText.loggedTarget(line.target.string)
        var message = ""
        message.reserveCapacity(name.utf8.count + target.utf8.count + code.utf8.count + 2)
        message += name
        message += " "
        message += target
        message += " "
        message += code
        logger.info(Logger.Message(stringLiteral: message), metadata: metadata)
    }
}
