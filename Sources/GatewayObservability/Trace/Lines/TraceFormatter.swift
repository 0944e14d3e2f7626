import Foundation
import GatewayCore
import Logging

/// Turns a ``TraceCapture`` into its line of the trace file (and body file) on
/// the writer thread: body redaction, the two curl lines, timings in seconds
/// (``CapturedTraceLine``), and the through-gateway curl line logged at
/// `notice` (before the record is written, so a reader that found the record
/// finds the log line too).
///
/// A class: each exchange's queued closure holds one reference to it, not a
/// copy of the redaction sets and upstream table (a retain and a release on
/// another thread per field, per exchange).
final class TraceFormatter: Sendable {
    let forms: TraceCurlForms
    /// Overrides the exchange's logger for the curl line (tests).
    let logger: Logger?
    /// The bound listener address for `-x` (port 0 resolved); the configured one until set.
    let boundProxy: TraceProxyAddress?
    /// Secrets obtained at run time (OAuth2 tokens), read for each record and
    /// scrubbed along with the configured ones.
    let runtimeSecrets: (any RuntimeSecretSource)?

    init(forms: TraceCurlForms, logger: Logger?, boundProxy: TraceProxyAddress?, runtimeSecrets: (any RuntimeSecretSource)? = nil) {
        self.forms = forms
        self.logger = logger
        self.boundProxy = boundProxy
        self.runtimeSecrets = runtimeSecrets
    }

    /// The line and body file of `capture`; `bodyPath` is where a body too
    /// large or not printable for an inline `--data-binary` goes.
    func entry(for capture: TraceCapture, bodyPath: @autoclosure () -> String) -> TraceWriter.Entry {
        let request = capture.request
        // The tokens in use now (and lately): an upstream may echo them.
        let forms = self.forms.adding(runtimeSecrets: runtimeSecrets?.runtimeSecrets() ?? [])
        let redacted = capture.body.map { forms.redactor.body($0, contentType: request.headers.first(name: "content-type")) }
        var bodyFile: (path: String, bytes: [UInt8])?
        let body = TraceCurlForms.body(redacted, length: capture.declaredLength) {
            let path = bodyPath()
            bodyFile = (path, redacted ?? [])
            return path
        }
        let length = redacted.map(\.count)
        var through = forms.throughGateway(request, body: body, bodyLength: length)
        if let bound = boundProxy?.url { through.proxy = bound }
        // Each line replays the protocol of its hop: the client's, and the last attempt's upstream.
        if capture.clientHTTPVersion == UpstreamHTTPVersion.http2Name { through.extraArguments.append("--http2") }
        var direct = forms.direct(request, body: body, bodyLength: length)
        if capture.attempts.last?.httpVersion == UpstreamHTTPVersion.http2Name { direct.extraArguments.append("--http2") }
        let attempts = capture.attempts.map { a in
            TraceRecord.Attempt(
                status: a.status, error: a.errorCode?.rawValue, reusedConnection: a.reusedConnection,
                connect: a.connect?.seconds, tls: a.tls?.seconds, ttfb: a.timeToFirstByte?.seconds, total: a.total?.seconds,
                start: (a.started - capture.startedAt).seconds,
                connectStart: a.connectStart.map { ($0 - a.started).seconds },
                sent: a.requestSent.map { ($0 - a.started).seconds },
                httpVersion: a.httpVersion == UpstreamHTTPVersion.http2Name ? a.httpVersion : nil
            )
        }
        let line = CapturedTraceLine(
            capture: capture,
            redactor: forms.redactor,
            through: through,
            direct: direct,
            attempts: attempts,
            endpoint: forms.redactor.scrub(request.clientAuthority + String(request.path)),
            time: TraceRecord.timestamp(capture.wallStart),
            upstream: request.upstreamName ?? capture.recordedUpstream
        )
        let bytes = line.jsonLine(capacity: line.estimatedBytes)
        // The curl line as text only when it is logged (the record has it as JSON already).
        let lineLogger = logger ?? capture.logger
        if lineLogger.logLevel <= .notice {
            let message: Logger.Message = "trace \(capture.id): \(through.line)"
            if logger == nil && capture.tagsLinesWithID {
                // As through the exchange's tagged logger: `request=<id>` among the line's metadata.
                lineLogger.notice(message, metadata: ["request": .string(capture.id)])
            } else {
                lineLogger.notice(message)
            }
        }
        return TraceWriter.Entry(line: bytes, body: bodyFile)
    }
}
