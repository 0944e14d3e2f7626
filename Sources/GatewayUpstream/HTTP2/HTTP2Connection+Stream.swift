import GatewayCore
import NIOCore
import NIOHTTP2

/// One attempt's stream on a connection: a child channel of the multiplexer,
/// read only on demand (its receive window is refilled only as it is read, so
/// a slow client holds the server back), with an ``UpstreamHTTP2StreamHandler`` running
/// the exchange.
extension HTTP2Connection {
    /// Opens a stream for `request`, whose slot the pool has leased; the
    /// exchange's parts go to `delegate` (called on this loop). When the stream
    /// cannot be opened (the connection closed meanwhile) nothing was sent:
    /// `notOpened` is called, at most once, with the slot already free again,
    /// and the attempt may lease another. Returns the stream's channel, for
    /// cancelling; nil when it could not be opened at all.
    func openStream(
        _ request: ProxyRequest,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate,
        notOpened: @escaping (any Error) -> Void
    ) -> EventLoopFuture<any Channel>? {
        eventLoop.preconditionInEventLoop()
        let upstream = self.upstream
        let ticket = HTTP2StreamTicket(freeSlot: events.streamEnded, notOpened: notOpened)
        guard channel.isActive else {
            ticket.openFailed(ConnectionClosedBeforeUse(upstream: upstream))
            return nil
        }
        let handler = UpstreamHTTP2StreamHandler(
            request: request, recorder: recorder, delegate: delegate, ticket: ticket,
            upstream: upstream, requestTimeout: requestTimeout, eventLoop: eventLoop
        )
        let boundHandler = NIOLoopBound(handler, eventLoop: eventLoop)
        let promise = eventLoop.makePromise(of: (any Channel).self)
        multiplexer.createStreamChannel(promise: promise) { stream in
            stream.eventLoop.makeCompletedFuture {
                // Reads only when the handler asks (the inherited autoRead is the parent's: on).
                try stream.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
                try stream.pipeline.syncOperations.addHandler(boundHandler.value)
            }
        }
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .failure(let error):
                ticket.openFailed(error)
            case .success(let stream):
                // Created while the connection was closing: never activated, it would wait forever.
                if !stream.isActive {
                    stream.close(promise: nil)
                    ticket.openFailed(ConnectionClosedBeforeUse(upstream: upstream))
                }
            }
        }
        return promise.futureResult
    }
}

/// A stream's lease of a connection's slot, on the connection's loop: the slot
/// is freed once (the exchange ended or failed, or the stream never opened),
/// and the attempt hears once if the stream could not be opened.
final class HTTP2StreamTicket {
    private var slotHeld = true
    private var opened = false
    private let freeSlot: () -> Void
    private let notOpened: (any Error) -> Void

    init(freeSlot: @escaping () -> Void, notOpened: @escaping (any Error) -> Void) {
        self.freeSlot = freeSlot
        self.notOpened = notOpened
    }

    /// The stream is open and its HEADERS written: failures are the exchange's from now on.
    func markOpened() {
        opened = true
    }

    func releaseSlot() {
        guard slotHeld else { return }
        slotHeld = false
        freeSlot()
    }

    /// The stream could not be opened: the slot is freed and, if nothing was sent, the attempt told.
    func openFailed(_ error: any Error) {
        releaseSlot()
        guard !opened else { return }
        opened = true
        notOpened(error)
    }
}
