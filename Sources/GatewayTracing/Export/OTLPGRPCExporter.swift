import GatewayConfig
import GatewayCore
import NIOCore
import NIOHTTP1

/// Sends export bodies to the collector as OTLP/gRPC: the unary call
/// `opentelemetry.proto.collector.trace.v1.TraceService/Export` over HTTP/2,
/// through the gateway's own upstream pool (``UpstreamTransport``), so the
/// collector gets what any upstream gets: TLS verified against `tracing.tls`'s
/// `ca_file` (or the system roots), its pins, its client certificate, and one
/// pooled HTTP/2 connection (h2 over `https`, prior-knowledge h2c over `http`).
///
/// The message is the same protobuf as OTLP/HTTP's, in one gRPC frame (a zero
/// compression flag and a 4-byte big-endian length before it); `tracing.headers`
/// go as metadata. The call succeeded when the answer is HTTP 200 and its
/// `grpc-status` (in the trailers, or in the head of a trailers-only answer)
/// is 0; anything else, an error or no answer within `timeout` is a failure
/// (counted as `export_failed`, as for HTTP).
final class OTLPGRPCExporter: OTLPExportTransport {
    static let path = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

    /// A call that did not succeed.
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
    let eventLoop: any EventLoop
    let timeout: TimeAmount
    private let transport: any UpstreamTransport
    private let metadata: [(String, String)]
    private let tls: UpstreamTLSSettings

    init(
        endpoint: OTLPEndpoint, headers: [(String, String)], tls: UpstreamTLSSettings, transport: any UpstreamTransport,
        eventLoop: any EventLoop, timeout: TimeAmount = .seconds(10)
    ) {
        self.endpoint = endpoint
        self.eventLoop = eventLoop
        self.timeout = timeout
        self.transport = transport
        self.tls = tls
        self.metadata = headers.map { ($0.0.lowercased(), $0.1) }
    }

    var collector: String { endpoint.authority }

    func send(_ body: ByteBuffer) -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        var framed = ByteBuffer()
        framed.reserveCapacity(5 + body.readableBytes)
        framed.writeInteger(UInt8(0))
        framed.writeInteger(UInt32(body.readableBytes))
        framed.writeImmutableBuffer(body)
        let fields = RequestFields(
            [("Content-Type", "application/grpc+proto"), ("User-Agent", "gateway-otlp-grpc"),
             ("grpc-timeout", "\(timeout.nanoseconds / 1_000_000)m")] + metadata)
        let request = ProxyRequest(
            method: .POST, scheme: endpoint.tls ? .https : .http, host: endpoint.host, port: endpoint.port,
            target: Self.path, version: .http1_1, headers: fields, body: .bytes(framed), upstreamName: "otlp-collector",
            tls: endpoint.tls ? tls : .standard, upstreamHTTPVersion: .http2)
        let call = GRPCCall(promise: eventLoop.makePromise(of: Void.self))
        let result = call.promise.futureResult
        let cancel = transport.startExchange(request, record: ExchangeRecord(), on: eventLoop, delegate: call)
        let timeout = self.timeout
        let bound = NIOLoopBound(call, eventLoop: eventLoop)
        let deadline = eventLoop.scheduleTask(in: timeout) {
            cancel.cancel()
            bound.value.abort(Failure.timedOut(timeout))
        }
        result.whenComplete { _ in deadline.cancel() }
        return result
    }

    /// The pool owns the connection: nothing to close here.
    func disconnect() {}
}

/// One call's answer, on the exporter's event loop.
private final class GRPCCall: UpstreamExchangeDelegate {
    let promise: EventLoopPromise<Void>
    private var done = false
    private var head: UpstreamResponseHead?
    private var writer: (any UpstreamRequestWriter)?

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    func abort(_ error: any Error) {
        writer?.abort(error)
        finish(.failure(error))
    }

    func upstreamExchangeStarted(_ writer: any UpstreamRequestWriter) { self.writer = writer }
    func upstreamResponseHead(_ head: UpstreamResponseHead) { self.head = head }
    /// The response message (an ExportTraceServiceResponse, maybe a partial success) is not read.
    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {}
    func upstreamReadComplete() {}

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        finish(Self.outcome(head: head, statusFields: trailers))
    }

    func upstreamResponseEnd() {
        // A trailers-only answer carries grpc-status in its head.
        finish(Self.outcome(head: head, statusFields: head?.headers ?? [:]))
    }

    func upstreamExchangeFailed(_ error: any Error) { finish(.failure(error)) }

    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        tunnel.channel.close(promise: nil)
        finish(.failure(OTLPGRPCExporter.Failure.status(head.status)))
    }

    var upstreamShouldPauseReading: Bool { false }

    private func finish(_ result: Result<Void, any Error>) {
        guard !done else { return }
        done = true
        writer = nil
        promise.completeWith(result)
    }

    static func outcome(head: UpstreamResponseHead?, statusFields: HTTPHeaders) -> Result<Void, any Error> {
        guard let head else { return .failure(OTLPGRPCExporter.Failure.noStatus) }
        guard head.status == .ok else { return .failure(OTLPGRPCExporter.Failure.status(head.status)) }
        guard let text = statusFields.first(name: "grpc-status"), let code = Int(text) else {
            return .failure(OTLPGRPCExporter.Failure.noStatus)
        }
        guard code == 0 else { return .failure(OTLPGRPCExporter.Failure.grpcStatus(code, statusFields.first(name: "grpc-message"))) }
        return .success(())
    }
}
