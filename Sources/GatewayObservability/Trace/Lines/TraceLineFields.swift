/// What one line of the trace file holds: a ``TraceRecord`` (tests, tools,
/// `trace show`), or the values the writer thread formats a captured exchange
/// from (``TraceFormatter``), whose curl lines and response fields go straight
/// into the line's bytes. ``jsonLine(capacity:)`` writes either, so the file
/// has one layout: byte for byte what `JSONEncoder` with
/// `[.sortedKeys, .withoutEscapingSlashes]` writes for the record (keys sorted,
/// nil fields left out, doubles as `description` without a trailing `.0`).
/// `TraceRecordJSONTests` compares the two.
protocol TraceLineFields {
    var attempts: [TraceRecord.Attempt] { get }
    var client: String { get }
    /// Writes the through-gateway curl line (the record's `curl`).
    func writeCurl(into text: inout JSONStringText)
    /// Writes the direct curl line (the record's `curlDirect`).
    func writeCurlDirect(into text: inout JSONStringText)
    var duration: Double { get }
    var endpoint: String { get }
    var error: String? { get }
    /// `HTTP/2` for a client that spoke it; nil (left out) for HTTP/1.1.
    var httpVersion: String? { get }
    var id: String { get }
    /// `mock`, `replay`, `fault:error`...: the gateway made (or shaped) the response (issue 55).
    var injected: String? { get }
    var method: String { get }
    var requestBytes: Int? { get }
    var responseBytes: Int { get }
    /// Whether the line has `responseHeaders` (an empty list is written).
    var hasResponseHeaders: Bool { get }
    /// Calls `header` for each response header in order, with writers of its name and value.
    func forEachResponseHeader(_ header: TraceHeaderWriter)
    var status: Int? { get }
    var time: String { get }
    var traceId: String? { get }
    var upstream: String? { get }
}

/// Writes one response header of a trace line, given writers of its name and value.
typealias TraceHeaderWriter = (_ name: (inout JSONStringText) -> Void, _ value: (inout JSONStringText) -> Void) -> Void

extension TraceLineFields {
    /// The JSON line, newline-terminated; `capacity` is about its size.
    func jsonLine(capacity: Int) -> [UInt8] {
        var json = JSONLineWriter(capacity: capacity)
        json.open("attempts", first: true)
        json.bytes.append(UInt8(ascii: "["))
        for (index, attempt) in attempts.enumerated() {
            if index > 0 { json.bytes.append(UInt8(ascii: ",")) }
            attempt.write(to: &json)
        }
        json.bytes.append(UInt8(ascii: "]"))
        json.field("client", client)
        json.field("curl") { writeCurl(into: &$0) }
        json.field("curlDirect") { writeCurlDirect(into: &$0) }
        json.field("duration", duration)
        json.field("endpoint", endpoint)
        if let error { json.field("error", error) }
        if let httpVersion { json.field("httpVersion", httpVersion) }
        json.field("id", id)
        if let injected { json.field("injected", injected) }
        json.field("method", method)
        if let requestBytes { json.field("requestBytes", requestBytes) }
        json.field("responseBytes", responseBytes)
        if hasResponseHeaders {
            json.open("responseHeaders")
            json.bytes.append(UInt8(ascii: "["))
            var first = true
            forEachResponseHeader { name, value in
                if !first { json.bytes.append(UInt8(ascii: ",")) }
                first = false
                json.open("name", first: true)
                json.quoted(name)
                json.field("value", writing: value)
                json.bytes.append(UInt8(ascii: "}"))
            }
            json.bytes.append(UInt8(ascii: "]"))
        }
        if let status { json.field("status", status) }
        json.field("time", time)
        if let traceId { json.field("traceId", traceId) }
        if let upstream { json.field("upstream", upstream) }
        json.bytes.append(UInt8(ascii: "}"))
        json.bytes.append(UInt8(ascii: "\n"))
        return json.bytes
    }
}

extension TraceRecord.Attempt {
    fileprivate func write(to json: inout JSONLineWriter) {
        var first = true
        func put(_ key: StaticString, _ write: (inout JSONLineWriter) -> Void) {
            json.open(key, first: first)
            first = false
            write(&json)
        }
        if let connect { put("connect") { $0.number(connect) } }
        if let connectStart { put("connectStart") { $0.number(connectStart) } }
        if let error { put("error") { $0.string(error) } }
        if let httpVersion { put("httpVersion") { $0.string(httpVersion) } }
        put("reusedConnection") { $0.bytes.append(contentsOf: (reusedConnection ? "true" : "false").utf8) }
        if let sent { put("sent") { $0.number(sent) } }
        if let start { put("start") { $0.number(start) } }
        if let status { put("status") { $0.integer(status) } }
        if let tls { put("tls") { $0.number(tls) } }
        if let total { put("total") { $0.number(total) } }
        if let ttfb { put("ttfb") { $0.number(ttfb) } }
        json.bytes.append(UInt8(ascii: "}"))
    }
}
