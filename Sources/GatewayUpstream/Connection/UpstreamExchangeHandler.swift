import GatewayCore
import NIOCore
import NIOHTTP1

/// The connection was found closed when an exchange was about to start on it:
/// nothing was sent, so the pool may take another connection.
struct ConnectionClosedBeforeUse: Error {
    let upstream: String
}

/// The last handler of an upstream connection's pipeline (after the HTTP client
/// codec): runs one exchange at a time and hands its response parts straight to
/// the exchange's ``UpstreamExchangeDelegate`` (the client connection's handler,
/// or the bridge to an async consumer), holding `read()` while the delegate
/// cannot take more. It applies the request timeout and tells the pool when an
/// exchange ends and whether the connection may be reused.
///
/// All its methods run on the channel's event loop.
final class UpstreamExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// The request body as far as the handler writes it itself.
    enum RequestBody: Sendable {
        case none
        case bytes(ByteBuffer)
        /// The delegate writes it through the ``UpstreamRequestWriter`` it gets.
        case streamed
    }

    struct Exchange {
        let id: Int
        let isHEAD: Bool
        let requestKeepAlive: Bool
        let recorder: AttemptRecorder
        let delegate: any UpstreamExchangeDelegate
        var awaitingHead = true
        var requestComplete = false
        var responseComplete = false
        var responseKeepAlive = true
        var outstandingWrites = 0
    }

    let upstream: String
    let requestTimeout: TimeAmount
    /// The channel's loop, kept for answering callers after the pipeline was torn down.
    let eventLoop: any EventLoop
    /// Called on the event loop when an exchange ends: true if the connection may be reused.
    private let onRelease: @Sendable (_ reusable: Bool) -> Void

    var context: ChannelHandlerContext?
    var exchange: Exchange?
    private var nextExchangeID = 0
    /// A `read()` held back because the delegate cannot take more.
    var heldRead = false
    private(set) var isClosed = false
    var lastProgress = NIODeadline.now()
    var timer: Scheduled<Void>?
    /// The exchange is waiting on the upstream and `timer` (or its re-arm) times it.
    var timerArmed = false

    init(
        upstream: String,
        requestTimeout: TimeAmount,
        eventLoop: any EventLoop,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) {
        self.upstream = upstream
        self.requestTimeout = requestTimeout
        self.eventLoop = eventLoop
        self.onRelease = onRelease
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        isClosed = !context.channel.isActive
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    // MARK: Starting and writing

    /// Starts an exchange: writes the head (and a buffered body), then tells the
    /// delegate, which writes a streamed body through the writer it gets.
    /// Throws ``ConnectionClosedBeforeUse`` when the connection closed while idle.
    func start(
        head: HTTPRequestHead,
        body: RequestBody,
        recorder: AttemptRecorder,
        delegate: any UpstreamExchangeDelegate
    ) throws {
        guard exchange == nil else {
            throw GatewayError(.internalError, "upstream connection leased twice", upstream: upstream)
        }
        guard let context, !isClosed else {
            // Closed while idle, just before it was leased: give it back for removal.
            onRelease(false)
            throw ConnectionClosedBeforeUse(upstream: upstream)
        }
        nextExchangeID += 1
        let id = nextExchangeID
        exchange = Exchange(id: id, isHEAD: head.method == .HEAD, requestKeepAlive: head.isKeepAlive, recorder: recorder, delegate: delegate)
        // Only the last write of a batch is observed: writes complete in order, and
        // a failed write fails every write queued after it.
        switch body {
        case .none:
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            write(.end(nil), exchangeID: id)
        case .bytes(let buffer):
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            write(.end(nil), exchangeID: id)
        case .streamed:
            context.write(wrapOutboundOut(.head(head)), promise: nil)
        }
        context.flush()
        delegate.upstreamExchangeStarted(ExchangeWriter(handler: self, exchangeID: id))
    }

    /// Writes one chunk of a streamed body; with `isLast`, the end of the request in
    /// the same flush, so the request counts as sent before any answer to it is read.
    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool, exchangeID: Int) -> EventLoopFuture<Void> {
        guard let context, exchange?.id == exchangeID, exchange?.requestComplete == false else {
            return failedWrite()
        }
        let future: EventLoopFuture<Void>
        if isLast {
            context.write(wrapOutboundOut(.body(.byteBuffer(chunk))), promise: nil)
            future = write(.end(nil), exchangeID: exchangeID)
        } else {
            future = write(.body(.byteBuffer(chunk)), exchangeID: exchangeID)
        }
        context.flush()
        return future
    }

    func endRequest(exchangeID: Int) -> EventLoopFuture<Void> {
        guard let context, exchange?.id == exchangeID, exchange?.requestComplete == false else {
            return failedWrite()
        }
        let future = write(.end(nil), exchangeID: exchangeID)
        context.flush()
        return future
    }

    /// The request body could not be read (client gone, length mismatch), or the
    /// consumer gave up: the exchange fails and the connection closes.
    func abort(exchangeID: Int, error: any Error) {
        guard exchange?.id == exchangeID else { return }
        fail(error)
    }

    @discardableResult
    private func write(_ part: HTTPClientRequestPart, exchangeID: Int) -> EventLoopFuture<Void> {
        guard let context else { return failedWrite() }
        let isEnd: Bool
        if case .end = part { isEnd = true } else { isEnd = false }
        exchange?.outstandingWrites += 1
        updateTimer()
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(part), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { result in
            self.writeCompleted(exchangeID: exchangeID, isEnd: isEnd, result: result)
        }
        return promise.futureResult
    }

    private func writeCompleted(exchangeID: Int, isEnd: Bool, result: Result<Void, any Error>) {
        guard exchange?.id == exchangeID else { return }
        exchange?.outstandingWrites -= 1
        switch result {
        case .success:
            noteProgress()
            if isEnd {
                exchange?.requestComplete = true
                exchange?.recorder.requestSent()
                if finishIfComplete() { return }
            }
            updateTimer()
        case .failure(let error):
            fail(error)
        }
    }

    private func failedWrite() -> EventLoopFuture<Void> {
        let error = GatewayError.upstreamClosed(upstream: upstream, beforeHead: exchange?.awaitingHead ?? true)
        return eventLoop.makeFailedFuture(error)
    }

    // MARK: Ending an exchange

    /// Ends the exchange once the response is complete. A response that completed
    /// before the request body was fully sent ends it too, with the connection closed.
    @discardableResult
    func finishIfComplete() -> Bool {
        guard let exchange, exchange.responseComplete else { return false }
        let reusable = exchange.requestComplete && exchange.requestKeepAlive && exchange.responseKeepAlive && !isClosed
        finish(reusable: reusable)
        return true
    }

    private func finish(reusable: Bool) {
        guard exchange != nil else { return }
        exchange = nil
        if reusable {
            disarmTimer()  // stays scheduled for the next exchange on this connection
            resumeHeldRead()
        } else {
            cancelTimer()
            context?.close(promise: nil)
        }
        onRelease(reusable)
    }

    /// Fails the exchange in flight (if any) with `error` and closes the connection.
    func fail(_ error: any Error) {
        guard let failed = exchange else {
            context?.close(promise: nil)
            return
        }
        exchange = nil
        cancelTimer()
        let mapped = GatewayError.exchangeFailure(error, upstream: upstream)
        // Recorded before the delegate hears of it, so that it sees the final record.
        failed.recorder.failed(mapped)
        context?.close(promise: nil)
        onRelease(false)
        failed.delegate.upstreamExchangeFailed(mapped)
    }

    fileprivate func onReleaseUnused() {
        onRelease(context != nil && !isClosed)
    }

    func markClosed() {
        isClosed = true
        if exchange == nil { cancelTimer() }
    }
}

/// The request side of one exchange, handed to its delegate: calls for an
/// exchange that has ended are refused (they cannot reach the next one).
final class ExchangeWriter: UpstreamRequestWriter {
    private let handler: UpstreamExchangeHandler
    private let exchangeID: Int

    init(handler: UpstreamExchangeHandler, exchangeID: Int) {
        self.handler = handler
        self.exchangeID = exchangeID
    }

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        handler.writeBodyPart(chunk, isLast: isLast, exchangeID: exchangeID)
    }

    func endRequest() -> EventLoopFuture<Void> {
        handler.endRequest(exchangeID: exchangeID)
    }

    func abort(_ error: any Error) {
        handler.abort(exchangeID: exchangeID, error: error)
    }

    func resumeReading() {
        handler.consumerDemand(exchangeID: exchangeID)
    }
}

extension UpstreamExchangeHandler {
    /// A lease whose requester went away before using it: the connection goes
    /// back to the pool as it is (closed ones are removed).
    func releaseUnused() {
        guard exchange == nil else { return }
        onReleaseUnused()
    }
}
