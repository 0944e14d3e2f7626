import GatewayCore
import NIOHTTP1

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

    func writeCurl(into text: inout JSONStringText) { through.writeLine(into: &text) }

    func writeCurlDirect(into text: inout JSONStringText) { direct.writeLine(into: &text) }

    var hasResponseHeaders: Bool { capture.responseHeaders != nil }

    /// Redacted as the curl lines' headers are: a redacted name's value as
    /// `${REDACTED_<NAME>}`, configured secret values scrubbed from the others.
    func forEachResponseHeader(_ header: (_ name: (inout JSONStringText) -> Void, _ value: (inout JSONStringText) -> Void) -> Void) {
        guard let headers = capture.responseHeaders else { return }
        for (name, value) in headers {
            if redactor.isRedactedHeader(name) {
                header({ $0.write(name) }, { text in
                    text.write("${")
                    text.write(ShellQuoting.sanitizedVariableName("REDACTED_" + name.uppercased()))
                    text.write("}")
                })
            } else {
                header({ $0.write(name) }, { $0.write(redactor.scrub(value)) })
            }
        }
    }

    /// About the size of the line: its buffer is sized once.
    var estimatedBytes: Int {
        var bytes = 256 + through.estimatedLineBytes + direct.estimatedLineBytes + endpoint.utf8.count + attempts.count * 160
        for (name, value) in capture.responseHeaders ?? [:] { bytes += 24 + name.utf8.count + value.utf8.count }
        return bytes
    }
}
