import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// Sends export bodies (``OTLPSpanEncoder``) to the collector through the
/// gateway's own upstream pool (``UpstreamTransport``), so the collector gets
/// what any upstream gets: TLS verified against `tracing.tls`'s `ca_file` (or
/// the system roots), its pins, its client certificate, pooled kept-alive
/// connections. No HTTP client of its own.
///
/// - `http/protobuf`: a POST of the message to the endpoint's path with
///   `Content-Type: application/x-protobuf`; HTTP/1.1 over `http`, h2 or
///   HTTP/1.1 as ALPN settles over `https`. Succeeded when the answer is 2xx.
/// - `grpc`: the unary call `opentelemetry.proto.collector.trace.v1.TraceService/Export`
///   over HTTP/2 (h2 over `https`, prior-knowledge h2c over `http`), the same
///   message in one gRPC frame (a zero compression flag and a 4-byte
///   big-endian length before it). Succeeded when the answer is HTTP 200 and
///   its `grpc-status` (in the trailers, or in the head of a trailers-only
///   answer) is 0.
///
/// `tracing.headers` go with every export (as gRPC metadata, lowercased). An
/// error, another answer or none within `timeout` fails the export (counted as
/// `export_failed` by ``SpanExporter``). Called on `eventLoop`, one export at a time.
final class OTLPExporter: Sendable {
    static let grpcPath = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

    /// An export that did not succeed, beyond the pool's own errors.
    enum Failure: Error, CustomStringConvertible {
        case timedOut(TimeAmount)
        case status(HTTPResponseStatus)
        /// `grpc-status` other than 0 (OK), with `grpc-message` when sent.
        case grpcStatus(Int, String?)
        case noStatus

        var description: String {
            switch self {
            case .timedOut(let timeout): "no answer within \(timeout.nanoseconds / 1_000_000_000) s"
            case .status(let status): "the collector answered HTTP \(status.code) \(status.reasonPhrase)"
            case .grpcStatus(let code, let message):
                "the collector answered grpc-status \(code)" + (message.map { ": " + TerminalSafety.escaped(String($0.prefix(200))) } ?? "")
            case .noStatus: "the collector's answer had no grpc-status"
            }
        }
    }

    let endpoint: OTLPEndpoint
    let exportProtocol: TracingConfig.ExportProtocol
    let eventLoop: any EventLoop
    let timeout: TimeAmount
    private let transport: any UpstreamTransport
    private let fields: RequestFields
    private let tls: UpstreamTLSSettings

    init(
        endpoint: OTLPEndpoint, exportProtocol: TracingConfig.ExportProtocol, headers: [(String, String)], tls: UpstreamTLSSettings,
        transport: any UpstreamTransport, eventLoop: any EventLoop, timeout: TimeAmount = .seconds(10)
    ) {
        self.endpoint = endpoint
        self.exportProtocol = exportProtocol
        self.eventLoop = eventLoop
        self.timeout = timeout
        self.transport = transport
        self.tls = endpoint.tls ? tls : .standard
        switch exportProtocol {
        case .httpProtobuf:
            self.fields = RequestFields([("Content-Type", "application/x-protobuf"), ("User-Agent", "gateway-otlp")] + headers)
        case .grpc:
            self.fields = RequestFields(
                [("Content-Type", "application/grpc+proto"), ("User-Agent", "gateway-otlp-grpc"),
                 ("grpc-timeout", "\(timeout.nanoseconds / 1_000_000)m")] + headers.map { ($0.0.lowercased(), $0.1) })
        }
    }

    /// Where spans go, as logs name it (`collector:4317`).
    var collector: String { endpoint.authority }

    /// Succeeds when the collector took the batch `body` (an encoded `ExportTraceServiceRequest`). On `eventLoop`.
    func send(_ body: ByteBuffer) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let call = OTLPCall(grpc: exportProtocol == .grpc, promise: eventLoop.makePromise(of: Void.self))
        let result = call.promise.futureResult
        let cancel = transport.startAttempt(request(body), record: ExchangeRecord(), on: eventLoop, delegate: call)
        let timeout = self.timeout
        let bound = NIOLoopBound(call, eventLoop: eventLoop)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            cancel.cancel()
            bound.value.abort(Failure.timedOut(timeout))
        }
        result.whenComplete { _ in deadline.cancel() }
        return result
    }

    /// The export of `body` as the pool's request.
    private func request(_ body: ByteBuffer) -> ProxyRequest {
        let scheme: UpstreamScheme = endpoint.tls ? .https : .http
        switch exportProtocol {
        case .httpProtobuf:
            return ProxyRequest(
                method: .POST, scheme: scheme, host: endpoint.host, port: endpoint.port, target: endpoint.target,
                version: .http1_1, headers: fields, body: .bytes(body), upstreamName: "otlp-collector", tls: tls, upstreamHTTPVersion: .auto)
        case .grpc:
            var framed = ByteBuffer()
            framed.reserveCapacity(5 + body.readableBytes)
            framed.writeInteger(UInt8(0))
            framed.writeInteger(UInt32(body.readableBytes))
            framed.writeImmutableBuffer(body)
            return ProxyRequest(
                method: .POST, scheme: scheme, host: endpoint.host, port: endpoint.port, target: Self.grpcPath,
                version: .http1_1, headers: fields, body: .bytes(framed), upstreamName: "otlp-collector", tls: tls, upstreamHTTPVersion: .http2)
        }
    }
}
