/// A record as a line of the trace file (``TraceLineFields``): how tools and
/// tests write records they built themselves.
extension TraceRecord: TraceLineFields {
    /// The JSON line, newline-terminated.
    public func jsonLine() -> [UInt8] {
        jsonLine(capacity: estimatedLineBytes)
    }

    /// About the size of ``jsonLine()`` without building it: the queue's byte budget counts it.
    public var estimatedLineBytes: Int {
        256 + curl.utf8.count + curlDirect.utf8.count + endpoint.utf8.count + client.utf8.count + attempts.count * 160
            + (responseHeaders?.reduce(0) { $0 + 24 + $1.name.utf8.count + $1.value.utf8.count } ?? 0)
    }

    func writeCurl(into text: inout JSONStringText) { text.write(curl) }

    func writeCurlDirect(into text: inout JSONStringText) { text.write(curlDirect) }

    var hasResponseHeaders: Bool { responseHeaders != nil }

    func forEachResponseHeader(_ header: TraceHeaderWriter) {
        for field in responseHeaders ?? [] {
            header({ $0.write(field.name) }, { $0.write(field.value) })
        }
    }
}
