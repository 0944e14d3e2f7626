import GatewayCore
import NIOCore
import NIOHTTP1

/// Stands between one upstream attempt and its ``Exchange`` when the
/// request may be retried: once the exchange gives the attempt up (a
/// per-try timeout, a retryable response), `detach` cuts it off, so late
/// callbacks of that attempt (from another loop, say) never reach the next one.
final class AttemptDelegate: UpstreamAttemptDelegate {
    private var exchange: Exchange?

    init(_ exchange: Exchange) {
        self.exchange = exchange
    }

    func detach() {
        exchange = nil
    }

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        guard let exchange else { return writer.abort(CancellationError()) }
        exchange.upstreamAttemptStarted(writer)
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        exchange?.upstreamResponseHead(head)
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        exchange?.upstreamResponseBodyPart(buffer)
    }

    func upstreamReadComplete() {
        exchange?.upstreamReadComplete()
    }

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        exchange?.upstreamResponseTrailers(trailers)
    }

    func upstreamResponseEnd() {
        exchange?.upstreamResponseEnd()
    }

    func upstreamAttemptFailed(_ error: any Error) {
        exchange?.upstreamAttemptFailed(error)
    }

    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        guard let exchange else { return tunnel.channel.close(promise: nil) }
        exchange.upstreamUpgraded(head, tunnel: tunnel)
    }

    var upstreamShouldPauseReading: Bool {
        exchange?.upstreamShouldPauseReading ?? false
    }
}
