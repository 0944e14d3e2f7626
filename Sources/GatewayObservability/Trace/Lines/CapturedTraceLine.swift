import GatewayCore
import NIOCore

/// A captured exchange as a line of the trace file (``TraceLineFields``), on
/// the writer thread: its two curl commands are quoted straight into the
/// line's JSON strings and its response fields redacted as they are written,
/// so no string is made for a curl line or a field's value (the record these
/// values make is read back from the line when the admin page asks).
struct CapturedTraceLine: TraceLineFields {
    let capture: TraceCapture
    let redactor: TraceRedactor
    let through: CurlCommand
    let direct: CurlCommand
    let attempts: [TraceRecord.Attempt]
    let endpoint: String
    let time: String
    let upstream: String?

    var client: String { capture.client }
    var duration: Double { capture.duration.seconds }
    var error: String? { capture.error }
    var id: String { capture.id }
    var method: String { capture.request.method.rawValue }
    var requestBytes: Int? { capture.body?.count ?? capture.declaredLength }
    var responseBytes: Int { capture.responseBytes }
    var status: Int? { capture.status }
    var traceId: String? { capture.traceID }
    var injected: String? { capture.injected }
    var httpVersion: String? { capture.clientHTTPVersion == UpstreamHTTPVersion.http2Name ? capture.clientHTTPVersion : nil }

    func writeCurl(into text: inout JSONStringText) { through.writeLine(into: &text) }

    func writeCurlDirect(into text: inout JSONStringText) { direct.writeLine(into: &text) }

    var hasResponseHeaders: Bool { capture.responseFields != nil }

    /// Redacted as the curl lines' headers are: a redacted name's value as
    /// `${REDACTED_<NAME>}`, configured secret values scrubbed from the others.
    /// Upstream fields go from their bytes into the line.
    func forEachResponseHeader(_ header: TraceHeaderWriter) {
        guard let fields = capture.responseFields else { return }
        switch fields.storage {
        case .headers(let headers):
            for (name, value) in headers { field(name: name, value: value, header) }
        case .lines(let lines, let dropped):
            ResponseFields.forEachLine(of: lines, dropped: dropped) { raw, line in field(raw, line, header) }
        }
        if let via = capture.responseVia { field(name: "Via", value: via, header) }
    }

    private func field(name: String, value: String, _ header: TraceHeaderWriter) {
        if redactor.isRedactedHeader(name) {
            header({ $0.write(name) }, { text in
                text.write("${")
                text.write(ShellQuoting.sanitizedVariableName(TraceRedactor.redactedVariable(name)))
                text.write("}")
            })
        } else {
            header({ $0.write(name) }, { $0.write(redactor.scrub(value)) })
        }
    }

    /// One upstream line: the name is a token (the framer checked it); a value
    /// of ASCII with no secret in it is copied as is, any other is made a
    /// string first (invalid UTF-8 repaired, secrets scrubbed).
    private func field(
        _ raw: UnsafeRawBufferPointer, _ line: ResponseFields.Line,
        _ header: TraceHeaderWriter
    ) {
        let name = UnsafeRawBufferPointer(rebasing: raw[line.start..<line.colon]).assumingMemoryBound(to: UInt8.self)
        if redactor.isRedactedHeader(raw, from: line.start, to: line.colon) {
            header({ $0.append(escaping: name) }, { text in
                // `sanitizedVariableName(redactedVariable(name))` for a token, byte by byte.
                text.write("${REDACTED_")
                for byte in name { text.bytes.append(Self.variableByte(byte)) }
                text.write("}")
            })
            return
        }
        // The framer accepted the line by these same bounds.
        guard let (_, valueStart, valueEnd) = HTTP1HeadLines.fieldBounds(raw, from: line.start, to: line.end) else { return }
        let value = UnsafeRawBufferPointer(rebasing: raw[valueStart..<valueEnd])
        if value.allSatisfy({ $0 < 0x80 }) && !redactor.containsSecret(value) {
            header({ $0.append(escaping: name) }, { $0.append(escaping: value.assumingMemoryBound(to: UInt8.self)) })
        } else {
            let text = redactor.scrub(String(decoding: value, as: UTF8.self))
            header({ $0.append(escaping: name) }, { $0.write(text) })
        }
    }

    /// A name byte in a shell variable's name: upper case, `_` for what a name cannot hold.
    private static func variableByte(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - 0x20
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): byte
        default: UInt8(ascii: "_")
        }
    }

    /// About the size of the line: its buffer is sized once.
    var estimatedBytes: Int {
        var bytes = 256 + through.estimatedLineBytes + direct.estimatedLineBytes + endpoint.utf8.count + attempts.count * 160
        if let fields = capture.responseFields {
            switch fields.storage {
            case .lines(let lines, _): bytes += 2 * lines.readableBytes
            case .headers(let headers): for (name, value) in headers { bytes += 24 + name.utf8.count + value.utf8.count }
            }
        }
        return bytes
    }
}
