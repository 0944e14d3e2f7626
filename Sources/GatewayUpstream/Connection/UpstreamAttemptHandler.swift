import GatewayCore
import NIOCore

/// The connection was found closed when an attempt was about to start on it:
/// nothing was sent, so the pool may take another connection.
struct ConnectionClosedBeforeUse: Error {
    let upstream: String
}

/// The last handler of an upstream connection's pipeline (after TLS, if any):
/// runs one attempt at a time, writes its request as bytes (an
/// ``HTTP1RequestHead``, then the body, chunked when its length is unknown),
/// frames its response from the bytes read (an ``HTTP1ResponseFramer``), and
/// hands the response parts straight to
/// the attempt's ``UpstreamAttemptDelegate`` (the client connection's handler,
/// or the bridge to an async consumer), holding `read()` while the delegate
/// cannot take more. It applies the request timeout and tells the pool when an
/// attempt ends and whether the connection may be reused.
///
/// The protocol state is an ``UpstreamAttemptStateMachine``: this handler feeds
/// it events (here the request side, in `+Inbound.swift` the framed response side) and
/// performs the action each returns (`+Actions.swift`); it owns only what the
/// machine must not: the channel context, the attempt's delegate and recorder,
/// and the scheduled timer task (`+Timeout.swift`).
///
/// All its methods run on the channel's event loop.
final class UpstreamAttemptHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The request body as far as the handler writes it itself.
    enum RequestBody: Sendable {
        case none
        case bytes(ByteBuffer)
        /// The delegate writes it through the ``UpstreamRequestWriter`` it gets.
        case streamed
    }

    /// Who hears of the attempt in flight: not protocol state, so not in the machine.
    struct ActiveAttempt {
        let recorder: AttemptRecorder
        let delegate: any UpstreamAttemptDelegate
        /// The request body goes in chunks (its length was not known).
        let chunkedBody: Bool
    }

    let upstream: String
    /// The channel's loop, kept for answering callers after the pipeline was torn down.
    let eventLoop: any EventLoop
    /// Called on the event loop when an attempt ends: true if the connection may be reused.
    let onRelease: @Sendable (_ reusable: Bool) -> Void

    var context: ChannelHandlerContext?
    /// The channel's synchronous options, while in a pipeline: looked up once
    /// (each lookup instantiated their type's metadata), read per request.
    private var channelOptions: (any NIOSynchronousChannelOptions)?
    var machine: UpstreamAttemptStateMachine
    /// Turns the bytes read into response heads, body parts and ends.
    var framer = HTTP1ResponseFramer()
    /// Set while the machine is in an attempt.
    var active: ActiveAttempt?
    /// Pending while the machine's request timeout is armed (and a while after).
    var timer: Scheduled<Void>?
    /// The last request head's buffer, for the next head: once its write is
    /// done this is the only reference, and clearing it allocates nothing.
    var spareHeadBuffer: ByteBuffer?
    /// An attempt ended on this connection and it was kept for the next.
    var servedBefore = false
    /// The failure being reported is a stale connection's (``GatewayError/staleConnection``).
    var failingStale = false

    init(
        upstream: String,
        requestTimeout: TimeAmount,
        eventLoop: any EventLoop,
        onRelease: @escaping @Sendable (_ reusable: Bool) -> Void
    ) {
        self.upstream = upstream
        self.eventLoop = eventLoop
        self.onRelease = onRelease
        self.machine = UpstreamAttemptStateMachine(requestTimeout: requestTimeout)
    }

    var requestTimeout: TimeAmount { machine.timeout.timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        channelOptions = context.channel.syncOptions
        if !context.channel.isActive { run(machine.channelClosed()) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Normally after `channelInactive`: nothing left to do.
        run(machine.channelClosed())
        self.context = nil
        channelOptions = nil
    }

    // MARK: Starting and writing

    /// Starts an attempt: writes the head (and a buffered body), then tells the
    /// delegate, which writes a streamed body through the writer it gets.
    /// Throws ``ConnectionClosedBeforeUse`` when the connection closed while idle.
    /// `upgrade`: a WebSocket handshake, whose 101 hands the connection to the
    /// delegate (any other answer closes it after the response).
    func start(
        head: HTTP1RequestHead,
        body: RequestBody,
        upgrade: WebSocketUpgrade? = nil,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate
    ) throws {
        let endQueued: Bool
        if case .streamed = body { endQueued = false } else { endQueued = true }
        // Only a handshake's head asks for anything of the connection: hop-by-hop fields are not forwarded.
        let now = eventLoop.now
        switch machine.startAttempt(isHEAD: head.isHEAD, keepAlive: upgrade == nil, upgrade: upgrade, endQueued: endQueued, now: now) {
        case .refuseBusy:
            throw GatewayError(.internalError, "upstream connection leased twice", upstream: upstream)
        case .refuseClosed:
            // Closed while idle, just before it was leased: give it back for removal.
            onRelease(false)
            throw ConnectionClosedBeforeUse(upstream: upstream)
        case .start(let attemptID):
            active = ActiveAttempt(recorder: recorder, delegate: delegate, chunkedBody: head.isChunked)
            spareHeadBuffer = ByteBuffer.spare(after: head.bytes)
            framer.expectResponse(isHEAD: head.isHEAD)
            guard let context = liveContext() else { return }
            // Only the last write of a batch is observed: writes complete in order, and
            // a failed write fails every write queued after it.
            switch body {
            case .none:
                // A bodyless request (most): its head is confirmed sent after
                // the flush, without a promise.
                context.write(wrapOutboundOut(head.bytes), promise: nil)
                context.flush()
                confirmSent(attemptID: attemptID, context: context, now: now)
            case .bytes(let buffer):
                // A buffered body has a length: never chunked.
                context.write(wrapOutboundOut(head.bytes), promise: nil)
                writeObserved(buffer, isEnd: true, attemptID: attemptID, context: context)
                context.flush()
            case .streamed:
                context.write(wrapOutboundOut(head.bytes), promise: nil)
                context.flush()
            }
            scheduleTimerIfArmed()
            delegate.upstreamAttemptStarted(AttemptWriter(handler: self, attemptID: attemptID))
        }
    }

    /// Writes one chunk of a streamed body; with `isLast`, the end of the request in
    /// the same flush, so the request counts as sent before any answer to it is read.
    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool, attemptID: Int) -> EventLoopFuture<Void> {
        switch machine.requestWrite(attemptID: attemptID, isEnd: isLast, now: eventLoop.now) {
        case .refuse(let beforeHead):
            return failedWrite(beforeHead: beforeHead)
        case .write:
            guard let context = liveContext() else { return failedWrite(beforeHead: true) }
            let future: EventLoopFuture<Void>
            if active?.chunkedBody == true {
                // A chunk of size 0 would end the body: an empty part writes no chunk.
                if chunk.readableBytes > 0 {
                    context.write(wrapOutboundOut(ChunkedFraming.sizeLine(chunk.readableBytes, allocator: context.channel.allocator)), promise: nil)
                    context.write(wrapOutboundOut(chunk), promise: nil)
                }
                let after = ChunkedFraming.after(data: chunk.readableBytes > 0, isLast: isLast)
                future = writeObserved(after, isEnd: isLast, attemptID: attemptID, context: context)
            } else {
                future = writeObserved(chunk, isEnd: isLast, attemptID: attemptID, context: context)
            }
            context.flush()
            scheduleTimerIfArmed()
            return future
        }
    }

    /// Ends a streamed request body whose length was not known.
    func endRequest(attemptID: Int) -> EventLoopFuture<Void> {
        switch machine.requestWrite(attemptID: attemptID, isEnd: true, now: eventLoop.now) {
        case .refuse(let beforeHead):
            return failedWrite(beforeHead: beforeHead)
        case .write:
            guard let context = liveContext() else { return failedWrite(beforeHead: true) }
            // A body with a length was all written already: the empty write marks its end.
            let end = ChunkedFraming.after(data: false, isLast: active?.chunkedBody == true)
            let future = writeObserved(end, isEnd: true, attemptID: attemptID, context: context)
            context.flush()
            scheduleTimerIfArmed()
            return future
        }
    }

    /// The request body could not be read (client gone, length mismatch), or the
    /// consumer gave up: the attempt fails and the connection closes.
    func abort(attemptID: Int, error: any Error) {
        run(machine.abort(attemptID: attemptID, error: error))
    }

    /// Writes `bytes` with a promise whose completion goes to the machine.
    @discardableResult
    private func writeObserved(_ bytes: ByteBuffer, isEnd: Bool, attemptID: Int, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(bytes), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.run(self.machine.writeSucceeded(attemptID: attemptID, isEnd: isEnd, now: self.eventLoop.now))
            case .failure(let error):
                self.run(self.machine.writeFailed(attemptID: attemptID, error: error))
            }
        }
        return promise.futureResult
    }

    /// The end of a request was written and flushed without a promise: when
    /// the channel holds none of its bytes any more, they reached the socket
    /// during the flush, as an observed write's promise would have said then
    /// (no promise, callback or closure per bodyless request). Otherwise an
    /// empty write is observed: it completes once everything before it is
    /// written. The only outbound handler below this one, NIOSSL's, holds
    /// writes back only until its handshake is done (a pooled connection's
    /// is): on a flush it encrypts every write it holds and passes the bytes
    /// down at once, so what the channel no longer buffers is on the socket.
    /// `now`: the attempt's start, read just before (the request timeout's
    /// clock has no use for a second reading within the same call).
    private func confirmSent(attemptID: Int, context: ChannelHandlerContext, now: NIODeadline) {
        let buffered = (try? channelOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? nil
        if buffered == 0 {
            run(machine.writeSucceeded(attemptID: attemptID, isEnd: true, now: now))
        } else {
            writeObserved(context.channel.allocator.buffer(capacity: 0), isEnd: true, attemptID: attemptID, context: context)
            context.flush()
        }
    }

    private func failedWrite(beforeHead: Bool) -> EventLoopFuture<Void> {
        eventLoop.makeFailedFuture(GatewayError.upstreamClosed(upstream: upstream, beforeHead: beforeHead))
    }

    /// The context for I/O the machine let through. The machine hears of
    /// `handlerRemoved`, so it lets none through outside a pipeline: nil is a bug.
    private func liveContext() -> ChannelHandlerContext? {
        if let context { return context }
        assertionFailure("I/O on an upstream attempt handler outside a pipeline")
        run(machine.channelClosed())
        return nil
    }

    // MARK: Ending and closing

    /// Fails the attempt in flight (if any) with `error` and closes the connection.
    func fail(_ error: any Error) {
        failingStale = isStale
        run(machine.errorCaught(error))
        failingStale = false
    }

    /// A lease whose requester went away before using it: the connection goes
    /// back to the pool as it is (closed ones are removed).
    func releaseUnused() {
        run(machine.releaseUnused())
    }

    /// The channel closed: an attempt in flight fails, the timer stops.
    func markClosed() {
        failingStale = isStale
        run(machine.channelClosed())
        failingStale = false
    }

    /// The connection served an attempt before this one, and not a byte of
    /// this one's response came: a failure now is a stale connection's.
    private var isStale: Bool {
        servedBefore && machine.isAwaitingHead && !framer.hasUnframedBytes
    }
}
