import GatewayCore
import NIOCore
import NIOHTTP1

/// One export's answer (``OTLPExporter``), on the exporter's event loop: the
/// response head, then its end (OTLP/HTTP: 2xx succeeded) or its trailers
/// (gRPC: `grpc-status` 0 succeeded). The response message (an
/// `ExportTraceServiceResponse`, maybe a partial-success report) is not read.
final class OTLPCall: UpstreamAttemptDelegate {
    let promise: EventLoopPromise<Void>
    private let grpc: Bool
    private var done = false
    private var head: UpstreamResponseHead?
    private var writer: (any UpstreamRequestWriter)?

    init(grpc: Bool, promise: EventLoopPromise<Void>) {
        self.grpc = grpc
        self.promise = promise
    }

    func abort(_ error: any Error) {
        writer?.abort(error)
        finish(.failure(error))
    }

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) { self.writer = writer }
    func upstreamResponseHead(_ head: UpstreamResponseHead) { self.head = head }
    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {}
    func upstreamReadComplete() {}

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        finish(outcome(statusFields: trailers))
    }

    func upstreamResponseEnd() {
        // A trailers-only gRPC answer carries grpc-status in its head.
        finish(outcome(statusFields: head?.headers ?? [:]))
    }

    func upstreamAttemptFailed(_ error: any Error) { finish(.failure(error)) }

    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        tunnel.channel.close(promise: nil)
        finish(.failure(OTLPExporter.Failure.status(head.status)))
    }

    var upstreamShouldPauseReading: Bool { false }

    private func finish(_ result: Result<Void, any Error>) {
        guard !done else { return }
        done = true
        writer = nil
        promise.completeWith(result)
    }

    private func outcome(statusFields: HTTPHeaders) -> Result<Void, any Error> {
        guard let head else { return .failure(GatewayError(.upstreamProtocolError, "the collector's answer had no head", upstream: "otlp-collector")) }
        guard grpc else {
            return (200..<300).contains(head.status.code) ? .success(()) : .failure(OTLPExporter.Failure.status(head.status))
        }
        guard head.status == .ok else { return .failure(OTLPExporter.Failure.status(head.status)) }
        guard let text = statusFields.first(name: "grpc-status"), let code = Int(text) else {
            return .failure(OTLPExporter.Failure.noStatus)
        }
        guard code == 0 else { return .failure(OTLPExporter.Failure.grpcStatus(code, statusFields.first(name: "grpc-message"))) }
        return .success(())
    }
}
