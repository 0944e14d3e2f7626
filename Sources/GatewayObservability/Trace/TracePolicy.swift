import Foundation
public import GatewayConfig
public import GatewayCore
public import Logging
import NIOCore
import NIOHTTP1

/// Outermost policy while `debug` is on: when an exchange ends (response body
/// done, failed or abandoned) it queues the exchange's captured values on the
/// ``TraceWriter`` (never waiting, never formatting); the writer thread makes
/// the ``TraceRecord`` and logs the through-gateway curl line at `notice`.
///
/// Request bodies: a buffered body is used as is; a streamed body with a
/// declared length up to ``captureLimit`` is buffered here and forwarded as
/// bytes; a larger streamed body is teed while it streams (kept only up to
/// ``teeLimit``, else noted as not captured).
public struct TracePolicy: GatewayPolicy {
    public static let captureLimit = CurlCommand.maxInlineBody
    public static let teeLimit = 8 * 1024 * 1024

    let writer: TraceWriter
    /// Redaction and curl lines, applied on the writer thread.
    let formatter: TraceFormatter

    public init(config: GatewayConfig, writer: TraceWriter, proxyURL: String? = nil, boundProxy: TraceProxyAddress? = nil, logger: Logger? = nil) {
        self.writer = writer
        self.formatter = TraceFormatter(forms: TraceCurlForms(config: config, proxyURL: proxyURL), logger: logger, boundProxy: boundProxy)
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
            let headers = response.headers
            if case .stream(let source) = response.body.storage {
                response.body.storage = .stream(ObservingBodySource(source, countingBytes: true) { bytes, code in
                    pending.finish(responseBytes: bytes, error: code?.rawValue, responseHeaders: headers)
                })
            } else {
                let count: Int = if case .bytes(let b) = response.body.storage { b.readableBytes } else { 0 }
                pending.finish(responseBytes: count, error: nil, responseHeaders: headers)
            }
            return response
        } catch {
            let code = (error as? GatewayError)?.code
            pending.status = code.map { Int($0.status.code) }
            pending.finish(responseBytes: 0, error: code?.rawValue ?? (error is CancellationError ? "cancelled" : "internal_error"), responseHeaders: nil)
            throw error
        }
    }

    /// On the event loop (or the chain's task): captures the exchange's values
    /// and queues them; the writer thread formats the record and logs its curl line.
    /// `request` is the request as routed, its body left out; `body` the captured body.
    func emit(
        request: ProxyRequest, declaredLength: Int?, body: [UInt8]?, context: RequestContext, wallStart: Date,
        status: Int?, responseBytes: Int, error: String?, responseHeaders: HTTPHeaders?
    ) {
        let capture = TraceCapture(
            id: context.id,
            wallStart: wallStart,
            client: context.clientAddress,
            request: request,
            recordedUpstream: context.record.upstreamName,
            attempts: context.record.attempts,
            declaredLength: declaredLength,
            body: body,
            status: status,
            error: error,
            responseBytes: responseBytes,
            responseHeaders: responseHeaders,
            startedAt: context.startedAt,
            duration: ContinuousClock.now - context.startedAt,
            // The base logger: the writer thread adds `request=<id>` to the line itself
            // (a tagged logger built here cost three allocations per exchange).
            logger: context.baseLogger,
            tagsLinesWithID: context.tagsLinesWithID
        )
        let formatter = self.formatter
        let bodiesDirectory = writer.bodiesDirectory
        writer.submit(estimatedBytes: capture.estimatedBytes) {
            // The body file's path is only made for a record that has one.
            formatter.entry(for: capture, bodyPath: TraceFiles.bodyFile(id: capture.id, bodiesDirectory: bodiesDirectory))
        }
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
