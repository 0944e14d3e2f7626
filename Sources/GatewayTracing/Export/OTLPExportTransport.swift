import NIOCore

/// How an export body (an encoded `ExportTraceServiceRequest`) reaches the
/// collector: OTLP/HTTP (``OTLPHTTPExporter``) or OTLP/gRPC
/// (``OTLPGRPCExporter``). Called on the exporter's event loop, one export at a time.
protocol OTLPExportTransport: Sendable {
    /// Where spans go, as logs name it (`collector:4317`).
    var collector: String { get }
    /// Succeeds when the collector took the batch.
    func send(_ body: ByteBuffer) -> EventLoopFuture<Void>
    /// Drops what the transport keeps open (at shutdown).
    func disconnect()
}

extension OTLPHTTPExporter: OTLPExportTransport {
    var collector: String { endpoint.authority }
}
