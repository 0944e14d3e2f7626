import Foundation
public import GatewayConfig
public import GatewayCore
public import Logging
import NIOCore
import NIOHTTP1

/// The outermost observer while `debug` is on (``TraceObservation``): when
/// an exchange ends (response body done, failed or abandoned) it queues the
/// exchange's captured values on the ``TraceWriter`` (never waiting, never
/// formatting); the writer thread makes the ``TraceRecord`` and logs the
/// through-gateway curl line at `notice`. The request body is copied as it
/// passes, up to ``teeLimit`` (else noted as not captured).
public struct TraceObserver: Sendable {
    public static let teeLimit = 8 * 1024 * 1024

    let writer: TraceWriter
    /// Redaction and curl lines, applied on the writer thread.
    let formatter: TraceFormatter

    /// - Parameter runtimeSecrets: secrets obtained at run time (the OAuth2 token stores), scrubbed from every record.
    public init(
        config: GatewayConfig, writer: TraceWriter, proxyURL: String? = nil, boundProxy: TraceProxyAddress? = nil, logger: Logger? = nil,
        runtimeSecrets: (any RuntimeSecretSource)? = nil
    ) {
        self.writer = writer
        self.formatter = TraceFormatter(
            forms: TraceCurlForms(config: config, proxyURL: proxyURL), logger: logger, boundProxy: boundProxy, runtimeSecrets: runtimeSecrets
        )
    }

    /// On the event loop: captures the exchange's values
    /// and queues them; the writer thread formats the record and logs its curl line.
    /// `request` is the request as routed, its body left out; `body` the captured body.
    func emit(
        request: ProxyRequest, declaredLength: Int?, body: [UInt8]?, context: RequestContext, wallStart: Date,
        status: Int?, responseBytes: Int, error: String?, responseFields: ResponseFields?, responseVia: String?
    ) {
        var capture = TraceCapture(
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
            responseFields: responseFields,
            responseVia: responseVia,
            startedAt: context.startedAt,
            duration: ContinuousClock.now - context.startedAt,
            // The base logger: the writer thread adds `request=<id>` to the line itself
            // (a tagged logger built here cost three allocations per exchange).
            logger: context.baseLogger,
            tagsLinesWithID: context.tagsLinesWithID,
            traceID: context.record.trace?.traceID,
            clientHTTPVersion: context.record.clientHTTPVersion
        )
        capture.injected = Self.injectedMark(context.record)
        let captured = capture
        let formatter = self.formatter
        let bodiesDirectory = writer.bodiesDirectory
        writer.submit(estimatedBytes: captured.estimatedBytes) {
            // The body file's path is only made for a record that has one.
            formatter.entry(for: captured, bodyPath: TraceFiles.bodyFile(id: captured.id, bodiesDirectory: bodiesDirectory))
        }
    }
}

extension TraceObserver {
    /// `mock`, `replay`, `fault:error` for a response the gateway made in the
    /// upstream's place; `fault:latency` (and the like) for one it only
    /// delayed; nil when nothing was injected. Read only when the record has injections.
    static func injectedMark(_ record: ExchangeRecord) -> String? {
        if let response = record.injectedResponse { return response.description }
        return record.injections.last?.description
    }

    /// The observer for `config` with its long-lived writer; warns when `trace.redact` is off.
    public static func make(
        config: GatewayConfig, writers: TraceWriterRegistry, boundProxy: TraceProxyAddress? = nil,
        runtimeSecrets: (any RuntimeSecretSource)? = nil, logger: Logger
    ) -> TraceObserver {
        if !config.trace.redact {
            logger.warning("trace.redact is false: traces at \(config.trace.file) contain secrets; for local debugging only")
        }
        return TraceObserver(config: config, writer: writers.writer(for: config.trace), boundProxy: boundProxy, runtimeSecrets: runtimeSecrets)
    }
}
