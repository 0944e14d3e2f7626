import Foundation
public import GatewayConfig
public import GatewayCore
public import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Outermost policy while `debug` is on: when an exchange ends (response body
/// done, failed or abandoned) it queues one ``TraceRecord`` on the
/// ``TraceWriter`` (never waiting) and logs the through-gateway curl line at
/// `notice`.
///
/// Request bodies: a buffered body is used as is; a streamed body with a
/// declared length up to ``captureLimit`` is buffered here and forwarded as
/// bytes; a larger streamed body is teed while it streams (kept only up to
/// ``teeLimit``, else noted as not captured).
public struct TracePolicy: GatewayPolicy {
    public static let captureLimit = CurlCommand.maxInlineBody
    public static let teeLimit = 8 * 1024 * 1024

    let writer: TraceWriter
    let forms: TraceCurlForms
    let logger: Logger?
    /// The bound listener address for `-x` (port 0 resolved); the configured one until set.
    let boundProxy: TraceProxyAddress?

    public init(config: GatewayConfig, writer: TraceWriter, proxyURL: String? = nil, boundProxy: TraceProxyAddress? = nil, logger: Logger? = nil) {
        self.writer = writer
        self.forms = TraceCurlForms(config: config, proxyURL: proxyURL)
        self.boundProxy = boundProxy
        self.logger = logger
    }

    public func handle(_ request: ProxyRequest, context: RequestContext, next: any ProxyHandler) async throws -> ProxyResponse {
        var request = request
        let capture = BodyCapture()
        switch request.body.storage {
        case .empty:
            capture.set([])
        case .bytes(let buffer):
            capture.set(Array(buffer.readableBytesView))
        case .stream(let source):
            if let length = request.body.declaredLength, length <= Self.captureLimit {
                let buffer = try await request.body.collect(upTo: Self.captureLimit)
                request.body = .bytes(buffer)
                capture.set(Array(buffer.readableBytesView))
            } else {
                request.body = ProxyBody(storage: .stream(TeeBodySource(source, capture: capture, limit: Self.teeLimit)), declaredLength: request.body.declaredLength)
            }
        }
        var snapshot = request
        snapshot.body = .empty
        let pending = PendingTrace(policy: self, request: snapshot, declaredLength: request.body.declaredLength, capture: capture, context: context, wallStart: Date())
        do {
            var response = try await next.handle(request, context: context)
            pending.status = Int(response.status.code)
            if case .stream(let source) = response.body.storage {
                response.body.storage = .stream(ObservingBodySource(source, countingBytes: true) { bytes, code in pending.finish(responseBytes: bytes, error: code?.rawValue) })
            } else {
                let count: Int = if case .bytes(let b) = response.body.storage { b.readableBytes } else { 0 }
                pending.finish(responseBytes: count, error: nil)
            }
            return response
        } catch {
            let code = (error as? GatewayError)?.code
            pending.status = code.map { Int($0.status.code) }
            pending.finish(responseBytes: 0, error: code?.rawValue ?? (error is CancellationError ? "cancelled" : "internal_error"))
            throw error
        }
    }

    func emit(_ pending: PendingTrace, responseBytes: Int, error: String?) {
        let context = pending.context
        let request = pending.request
        let captured = pending.capture.bytes
        let redacted = captured.map { forms.redactor.body($0, contentType: request.headers.first(name: "content-type")) }
        let bodyPath = writer.bodyFilePath(id: context.id)
        var bodyFile: (path: String, bytes: [UInt8])?
        let body = TraceCurlForms.body(redacted, length: pending.declaredLength) {
            bodyFile = (bodyPath, redacted ?? [])
            return bodyPath
        }
        let length = redacted.map(\.count)
        var throughCommand = forms.throughGateway(request, body: body, bodyLength: length)
        if let bound = boundProxy?.url { throughCommand.proxy = bound }
        let through = throughCommand.line
        let direct = forms.direct(request, body: body, bodyLength: length).line
        let attempts = context.record.attempts.map { a in
            TraceRecord.Attempt(
                status: a.status, error: a.errorCode?.rawValue, reusedConnection: a.reusedConnection,
                connect: a.connect?.seconds, tls: a.tls?.seconds, ttfb: a.timeToFirstByte?.seconds, total: a.total?.seconds
            )
        }
        let record = TraceRecord(
            id: context.id,
            time: TraceRecord.timestamp(pending.wallStart),
            client: context.clientAddress,
            upstream: request.upstreamName ?? context.record.upstreamName,
            method: request.method.rawValue,
            endpoint: forms.redactor.scrub(request.clientAuthority + String(request.path)),
            attempts: attempts,
            status: pending.status,
            error: error,
            requestBytes: captured?.count ?? pending.declaredLength,
            responseBytes: responseBytes,
            duration: (ContinuousClock.now - context.startedAt).seconds,
            curl: through,
            curlDirect: direct
        )
        // Logged before the record is queued: whoever reads the record finds the line logged.
        (logger ?? context.logger).notice("trace \(context.id): \(through)")
        writer.submit(record, body: bodyFile)
    }
}

/// The exchange state the trace needs once the response is done.
final class PendingTrace: Sendable {
    let policy: TracePolicy
    let request: ProxyRequest
    let declaredLength: Int?
    let capture: BodyCapture
    let context: RequestContext
    let wallStart: Date
    private let state = NIOLockedValueBox((status: Int?.none, done: false))

    init(policy: TracePolicy, request: ProxyRequest, declaredLength: Int?, capture: BodyCapture, context: RequestContext, wallStart: Date) {
        self.policy = policy
        self.request = request
        self.declaredLength = declaredLength
        self.capture = capture
        self.context = context
        self.wallStart = wallStart
    }

    var status: Int? {
        get { state.withLockedValue { $0.status } }
        set { state.withLockedValue { $0.status = newValue } }
    }

    func finish(responseBytes: Int, error: String?) {
        let first = state.withLockedValue { s -> Bool in
            defer { s.done = true }
            return !s.done
        }
        guard first else { return }
        policy.emit(self, responseBytes: responseBytes, error: error)
    }
}

extension TracePolicy {
    /// The policy for `config` with its long-lived writer; warns when `trace.redact` is off.
    public static func make(config: GatewayConfig, writers: TraceWriterRegistry, boundProxy: TraceProxyAddress? = nil, logger: Logger) -> TracePolicy {
        if !config.trace.redact {
            logger.warning("trace.redact is false: traces at \(config.trace.file) contain secrets; for local debugging only")
        }
        return TracePolicy(config: config, writer: writers.writer(for: config.trace), boundProxy: boundProxy)
    }
}
