/// The exchange line as text, on the log writer thread: the same bytes as
/// ``GatewayLogHandler/format(_:label:metadata:provided:timestamp:)`` writes
/// for the event the listener would have logged (level `info`, the line's
/// keys as its only metadata, sorted by key), appended straight to the batch:
/// no dictionary, no pairs to sort (the keys' order is fixed), numbers written
/// by ``LoggedText/appendDecimal(_:to:)``.
extension ExchangeLine {
    /// One line, newline included.
    func format(label: String, timestamp: String) -> String {
        var line = ""
        append(label: label, timestamp: timestamp, to: &line)
        return line
    }

    /// ``format(label:timestamp:)`` appended to `line`.
    func append(label: String, timestamp: String, to line: inout String) {
        line += timestamp
        line += " info"
        if !label.isEmpty { line += " " }
        line += label
        line += ":"
        // The keys in the order `<` sorts them: bytes_in, bytes_out, error, ms,
        // request, span_id, status, trace_id, upstream.
        line += " bytes_in="
        LoggedText.appendDecimal(bytesIn, to: &line)
        line += " bytes_out="
        LoggedText.appendDecimal(bytesOut, to: &line)
        if let error {
            line += " error="
            line += error.rawValue
        }
        line += " ms="
        LoggedText.appendHundredths(milliseconds, to: &line)
        if let requestID {
            line += " request="
            line += requestID
        }
        let trace = self.trace
        if let trace {
            line += " span_id="
            line += trace.spanID
        }
        line += " status="
        LoggedText.appendDecimal(status, to: &line)
        if let trace {
            line += " trace_id="
            line += trace.traceID
        }
        if let upstream {
            line += " upstream="
            line += upstream
        }
        line += " ["
        line += source
        line += "] "
        // The message: `METHOD target status`.
        line += LoggedText.text(of: method)
        line += " "
        target.appendLogged(to: &line)
        line += " "
        LoggedText.appendDecimal(status, to: &line)
        line += "\n"
    }
}
