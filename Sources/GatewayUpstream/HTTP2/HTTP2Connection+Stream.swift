import GatewayCore
import NIOCore
import NIOHTTP2

/// One attempt's stream on a connection: an ``UpstreamHTTP2Stream`` its
/// ``UpstreamHTTP2ConnectionHandler`` runs, read only on demand (its receive
/// window is refilled only as its delegate takes what arrived, so a slow client
/// holds the server back).
extension HTTP2Connection {
    /// Opens a stream for `request`, whose slot the pool has leased; the
    /// exchange's parts go to `delegate` (called on this loop). When the stream
    /// cannot be opened (the connection closed or went away meanwhile) nothing
    /// was sent: `notOpened` is called, at most once, with the slot already
    /// free again, and the attempt may lease another. Returns the stream, for
    /// cancelling; nil when it could not be opened at all.
    func openStream(
        _ request: ProxyRequest,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate,
        notOpened: @escaping (any Error) -> Void
    ) -> UpstreamHTTP2Stream? {
        let ticket = HTTP2StreamTicket(freeSlot: events.streamEnded, notOpened: notOpened)
        return handler.value.openStream(request, recorder: recorder, delegate: delegate, ticket: ticket)
    }
}

/// Cancels an open stream from the attempt's loop, which may not be the connection's.
struct HTTP2StreamCancellation: Sendable {
    let stream: NIOLoopBound<UpstreamHTTP2Stream>

    func cancel() {
        if stream.eventLoop.inEventLoop {
            stream.value.cancel()
        } else {
            let stream = self.stream
            stream.eventLoop.execute { stream.value.cancel() }
        }
    }
}

/// A stream's lease of a connection's slot, on the connection's loop: the slot
/// is freed once (the exchange ended or failed, or the stream never opened),
/// and the attempt hears once if the stream could not be opened. Each closure
/// is dropped once it can no longer be called: `notOpened` holds the attempt,
/// which holds the stream, which holds this ticket, and that cycle kept every
/// ended exchange alive.
final class HTTP2StreamTicket {
    private var freeSlot: (() -> Void)?
    private var notOpened: ((any Error) -> Void)?

    init(freeSlot: @escaping () -> Void, notOpened: @escaping (any Error) -> Void) {
        self.freeSlot = freeSlot
        self.notOpened = notOpened
    }

    /// The stream is open and its HEADERS written: failures are the exchange's from now on.
    func markOpened() {
        notOpened = nil
    }

    func releaseSlot() {
        guard let freeSlot else { return }
        self.freeSlot = nil
        freeSlot()
    }

    /// The stream could not be opened: the slot is freed and, if nothing was sent, the attempt told.
    func openFailed(_ error: any Error) {
        releaseSlot()
        guard let notOpened else { return }
        self.notOpened = nil
        notOpened(error)
    }
}
