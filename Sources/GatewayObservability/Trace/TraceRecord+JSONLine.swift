/// The record's JSON line, written by hand: byte for byte what `JSONEncoder`
/// with `[.sortedKeys, .withoutEscapingSlashes]` writes (keys sorted, nil
/// fields left out, doubles as `description` without a trailing `.0`), at a
/// fraction of its cost (no boxing, no key sorting, no intermediate tree).
/// `TraceRecordJSONTests` compares the two.
extension TraceRecord {
    /// The JSON line, newline-terminated.
    public func jsonLine() -> [UInt8] {
        var json = JSONLineWriter(capacity: estimatedLineBytes)
        json.open("attempts", first: true)
        json.bytes.append(UInt8(ascii: "["))
        for (index, attempt) in attempts.enumerated() {
            if index > 0 { json.bytes.append(UInt8(ascii: ",")) }
            attempt.write(to: &json)
        }
        json.bytes.append(UInt8(ascii: "]"))
        json.field("client", client)
        json.field("curl", curl)
        json.field("curlDirect", curlDirect)
        json.field("duration", duration)
        json.field("endpoint", endpoint)
        if let error { json.field("error", error) }
        json.field("id", id)
        json.field("method", method)
        if let requestBytes { json.field("requestBytes", requestBytes) }
        json.field("responseBytes", responseBytes)
        if let responseHeaders {
            json.open("responseHeaders")
            json.bytes.append(UInt8(ascii: "["))
            for (index, header) in responseHeaders.enumerated() {
                if index > 0 { json.bytes.append(UInt8(ascii: ",")) }
                json.open("name", first: true)
                json.string(header.name)
                json.field("value", header.value)
                json.bytes.append(UInt8(ascii: "}"))
            }
            json.bytes.append(UInt8(ascii: "]"))
        }
        if let status { json.field("status", status) }
        json.field("time", time)
        if let upstream { json.field("upstream", upstream) }
        json.bytes.append(UInt8(ascii: "}"))
        json.bytes.append(UInt8(ascii: "\n"))
        return json.bytes
    }

    /// About the size of ``jsonLine()`` without building it: the queue's byte budget counts it.
    public var estimatedLineBytes: Int {
        256 + curl.utf8.count + curlDirect.utf8.count + endpoint.utf8.count + client.utf8.count + attempts.count * 160
            + (responseHeaders?.reduce(0) { $0 + 24 + $1.name.utf8.count + $1.value.utf8.count } ?? 0)
    }
}

extension TraceRecord.Attempt {
    fileprivate func write(to json: inout JSONLineWriter) {
        var first = true
        func put(_ key: String, _ write: (inout JSONLineWriter) -> Void) {
            json.open(key, first: first)
            first = false
            write(&json)
        }
        if let connect { put("connect") { $0.number(connect) } }
        if let connectStart { put("connectStart") { $0.number(connectStart) } }
        if let error { put("error") { $0.string(error) } }
        put("reusedConnection") { $0.bytes.append(contentsOf: (reusedConnection ? "true" : "false").utf8) }
        if let sent { put("sent") { $0.number(sent) } }
        if let start { put("start") { $0.number(start) } }
        if let status { put("status") { $0.bytes.append(contentsOf: String(status).utf8) } }
        if let tls { put("tls") { $0.number(tls) } }
        if let total { put("total") { $0.number(total) } }
        if let ttfb { put("ttfb") { $0.number(ttfb) } }
        json.bytes.append(UInt8(ascii: "}"))
    }
}

/// The few JSON pieces a trace line needs, appended to one byte buffer.
struct JSONLineWriter {
    var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// `{"key":` for the first key of an object, `,"key":` for the others.
    mutating func open(_ key: String, first: Bool = false) {
        bytes.append(first ? UInt8(ascii: "{") : UInt8(ascii: ","))
        string(key)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ key: String, _ value: String) {
        open(key)
        string(value)
    }

    mutating func field(_ key: String, _ value: Int) {
        open(key)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func field(_ key: String, _ value: Double) {
        open(key)
        number(value)
    }

    /// As `JSONEncoder`: `description`, `1.0` as `1`. (Non-finite values cannot be
    /// encoded by `JSONEncoder` at all; they never occur in a duration.)
    mutating func number(_ value: Double) {
        guard value.isFinite else {
            bytes.append(contentsOf: "0".utf8)
            return
        }
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    /// A quoted string: `"` and `\` escaped, control characters as `\n`-style
    /// or `\u00XX` escapes, `/` and everything else (UTF-8) as is. Runs of bytes
    /// that need no escape (nearly all of them) are copied at once.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            var runStart = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                escape(byte)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hexDigit(byte >> 4))
            bytes.append(Self.hexDigit(byte & 0x0F))
        }
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}
