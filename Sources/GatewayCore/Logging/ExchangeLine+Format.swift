/// The exchange line as text, on the log writer thread: the same bytes as
/// ``GatewayLogHandler/format(_:label:metadata:provided:timestamp:)`` writes
/// for the event the listener would have logged (level `info`, the line's
/// keys as its only metadata, sorted by key), appended straight to the
/// batch's bytes: no dictionary, no pairs to sort (the keys' order is fixed),
/// numbers written digit by digit (``LoggedText/appendDecimal(_:to:)-([UInt8])``).
/// Bytes, not a `String`: each of a line's two dozen appends to a string
/// checked its capacity, uniqueness and ASCII flags, and each number was a
/// string of its own first (about 450 ns a line on the writer thread, which
/// shares the loops' cores).
extension ExchangeLine {
    /// One line, newline included.
    func format(label: String, timestamp: String) -> String {
        var line: [UInt8] = []
        append(label: label, timestamp: timestamp, to: &line)
        return String(decoding: line, as: UTF8.self)
    }

    /// ``format(label:timestamp:)`` appended to `line`.
    func append(label: String, timestamp: String, to line: inout [UInt8]) {
        line.append(contentsOf: timestamp.utf8)
        line.append(contentsOf: " info".utf8)
        if !label.isEmpty { line.append(UInt8(ascii: " ")) }
        line.append(contentsOf: label.utf8)
        // The keys in the order `<` sorts them: bytes_in, bytes_out, error, ms,
        // request, span_id, status, trace_id, upstream.
        line.append(contentsOf: ": bytes_in=".utf8)
        LoggedText.appendDecimal(bytesIn, to: &line)
        line.append(contentsOf: " bytes_out=".utf8)
        LoggedText.appendDecimal(bytesOut, to: &line)
        if let error {
            line.append(contentsOf: " error=".utf8)
            line.append(contentsOf: error.rawValue.utf8)
        }
        if let injected {
            line.append(contentsOf: " injected=".utf8)
            line.append(contentsOf: injected.utf8)
        }
        line.append(contentsOf: " ms=".utf8)
        LoggedText.appendHundredths(milliseconds, to: &line)
        if let requestID {
            line.append(contentsOf: " request=".utf8)
            line.append(contentsOf: requestID.utf8)
        }
        let trace = self.trace
        if let trace {
            line.append(contentsOf: " span_id=".utf8)
            line.append(contentsOf: trace.spanID.utf8)
        }
        line.append(contentsOf: " status=".utf8)
        LoggedText.appendDecimal(status, to: &line)
        if let trace {
            line.append(contentsOf: " trace_id=".utf8)
            line.append(contentsOf: trace.traceID.utf8)
        }
        if let upstream {
            line.append(contentsOf: " upstream=".utf8)
            line.append(contentsOf: upstream.utf8)
        }
        line.append(contentsOf: " [".utf8)
        line.append(contentsOf: source.utf8)
        line.append(contentsOf: "] ".utf8)
        // The message: `METHOD target status`.
        line.append(contentsOf: LoggedText.text(of: method).utf8)
        line.append(UInt8(ascii: " "))
        target.appendLogged(to: &line)
        line.append(UInt8(ascii: " "))
        LoggedText.appendDecimal(status, to: &line)
        line.append(UInt8(ascii: "\n"))
    }
}
