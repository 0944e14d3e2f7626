import GatewayCore
import NIOCore
import NIOHTTP1

/// Lets a delegate bound to one event loop (a client connection's) receive an
/// exchange run by a connection on another loop: every call hops to the loop it
/// belongs to. Back-pressure crosses too: after each body part the delegate's
/// answer to `upstreamShouldPauseReading` is carried back, and its
/// `resumeReading()` releases a held read.
///
/// Unchecked Sendable: `delegate` is only touched on `delegateLoop`, `writer`
/// and `pausedByDelegate` only on `connectionLoop` (each closure below runs on
/// the loop named by the `execute` it is passed to).
final class LoopHoppingDelegate: UpstreamAttemptDelegate, @unchecked Sendable {
    private let delegate: any UpstreamAttemptDelegate
    private let delegateLoop: any EventLoop
    private let connectionLoop: any EventLoop
    private var writer: (any UpstreamRequestWriter)?
    private var pausedByDelegate = false

    init(delegate: any UpstreamAttemptDelegate, delegateLoop: any EventLoop, connectionLoop: any EventLoop) {
        self.delegate = delegate
        self.delegateLoop = delegateLoop
        self.connectionLoop = connectionLoop
    }

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        let hopping = HoppingWriter(owner: self)
        delegateLoop.execute { self.delegate.upstreamAttemptStarted(hopping) }
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        delegateLoop.execute { self.delegate.upstreamResponseHead(head) }
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        delegateLoop.execute {
            self.delegate.upstreamResponseBodyPart(buffer)
            if self.delegate.upstreamShouldPauseReading {
                self.connectionLoop.execute { self.pausedByDelegate = true }
            }
        }
    }

    func upstreamReadComplete() {
        delegateLoop.execute { self.delegate.upstreamReadComplete() }
    }

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        delegateLoop.execute { self.delegate.upstreamResponseTrailers(trailers) }
    }

    /// The end and a failure let go of the writer: an HTTP/2 stream's holds
    /// the stream, which holds this delegate, and that cycle kept every ended
    /// exchange alive. A write after them fails, as the stream would refuse it.
    func upstreamResponseEnd() {
        writer = nil
        delegateLoop.execute { self.delegate.upstreamResponseEnd() }
    }

    func upstreamAttemptFailed(_ error: any Error) {
        writer = nil
        delegateLoop.execute { self.delegate.upstreamAttemptFailed(error) }
    }

    var upstreamShouldPauseReading: Bool { pausedByDelegate }

    /// The request side as the delegate sees it, on its own loop.
    private final class HoppingWriter: UpstreamRequestWriter, @unchecked Sendable {
        private let owner: LoopHoppingDelegate

        init(owner: LoopHoppingDelegate) {
            self.owner = owner
        }

        func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
            let owner = self.owner
            return owner.connectionLoop.flatSubmit {
                owner.writer?.writeBodyPart(chunk, isLast: isLast) ?? owner.connectionLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
            }.hop(to: owner.delegateLoop)
        }

        func endRequest() -> EventLoopFuture<Void> {
            let owner = self.owner
            return owner.connectionLoop.flatSubmit {
                owner.writer?.endRequest() ?? owner.connectionLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
            }.hop(to: owner.delegateLoop)
        }

        func abort(_ error: any Error) {
            let owner = self.owner
            owner.connectionLoop.execute { owner.writer?.abort(error) }
        }

        func resumeReading() {
            let owner = self.owner
            owner.connectionLoop.execute {
                owner.pausedByDelegate = false
                owner.writer?.resumeReading()
            }
        }
    }
}
