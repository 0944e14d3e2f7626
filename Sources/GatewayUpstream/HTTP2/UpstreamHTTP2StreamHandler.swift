import GatewayCore
import NIOCore
import NIOHTTP2

/// The only handler of one attempt's HTTP/2 stream (a child channel of the
/// connection's multiplexer): writes the request as HEADERS (``HTTP2Fields``)
/// and DATA (a buffered body with the HEADERS, a streamed one through the
/// ``UpstreamRequestWriter`` the delegate gets, END_STREAM on the last), and
/// hands the response to the exchange's ``UpstreamAttemptDelegate``: the head
/// (interim 1xx heads skipped), each DATA frame's bytes, a read's end,
/// trailers, the end; or the failure (a reset, a close, the timeout).
///
/// The stream reads only when asked, and this handler asks only while the
/// delegate can take more (``UpstreamAttemptDelegate/upstreamShouldPauseReading``),
/// again on ``UpstreamRequestWriter/resumeReading()``: NIOHTTP2 refills the
/// stream's receive window only as its reads take the frames, so a slow client
/// holds the server back by flow control while the connection's other streams go on.
///
/// The protocol state is an ``UpstreamHTTP2StreamStateMachine`` (here the request
/// side, in `+Inbound.swift` the response side, in `+Actions.swift` what the
/// machine decides and the request timeout's task). All its methods run on the
/// connection's event loop.
final class UpstreamHTTP2StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// Until the stream opens: what to send.
    var request: ProxyRequest?
    let recorder: AttemptRecorder
    let delegate: any UpstreamAttemptDelegate
    let ticket: HTTP2StreamTicket
    let upstream: String
    let eventLoop: any EventLoop
    var machine: UpstreamHTTP2StreamStateMachine
    var context: ChannelHandlerContext?
    /// Pending while the machine's request timeout is armed (and a while after).
    var timer: NIOScheduledCallback?

    init(
        request: ProxyRequest,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate,
        ticket: HTTP2StreamTicket,
        upstream: String,
        requestTimeout: TimeAmount,
        eventLoop: any EventLoop
    ) {
        self.request = request
        self.recorder = recorder
        self.delegate = delegate
        self.ticket = ticket
        self.upstream = upstream
        self.eventLoop = eventLoop
        self.machine = UpstreamHTTP2StreamStateMachine(requestTimeout: requestTimeout, isHEAD: request.method == .HEAD)
    }

    var requestTimeout: TimeAmount { machine.timeout.timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        perform(machine.channelClosed())
        self.context = nil
    }

    /// The stream is open: the request goes out, the delegate gets its writer, the first read is asked for.
    func channelActive(context: ChannelHandlerContext) {
        guard let request else { return }
        self.request = nil
        let body = UpstreamConnection.requestBody(of: request).0
        let endQueued: Bool
        if case .streamed = body { endQueued = false } else { endQueued = true }
        machine.start(endQueued: endQueued, now: eventLoop.now)
        ticket.markOpened()
        let headers = HTTP2Fields.requestHeaders(request)
        switch body {
        case .none:
            // A bodyless request's HEADERS are not flow-controlled: NIOHTTP2 writes them on
            // this flush, so they count as sent there (no promise, callback and future per
            // request). Should the write fail, the stream closes and the machine hears that.
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
            perform(machine.writeSucceeded(isEnd: true, now: eventLoop.now))
        case .bytes(let buffer):
            // A failed HEADERS fails the DATA after it too: one observed write is enough.
            context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
            writeObserved(.data(.init(data: .byteBuffer(buffer), endStream: true)), isEnd: true, context: context)
            context.flush()
        case .streamed:
            writeObserved(.headers(.init(headers: headers)), isEnd: false, context: context)
            context.flush()
        }
        scheduleTimerIfArmed()
        delegate.upstreamAttemptStarted(HTTP2StreamWriter(handler: self))
        requestRead()
        context.fireChannelActive()
    }

    // MARK: Writing

    /// Writes one chunk of a streamed body; with `isLast`, END_STREAM on it.
    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        switch machine.requestWrite(isEnd: isLast, now: eventLoop.now) {
        case .refuse(let beforeHead):
            return eventLoop.makeFailedFuture(GatewayError.upstreamClosed(upstream: upstream, beforeHead: beforeHead))
        case .write:
            guard let context else { return eventLoop.makeFailedFuture(GatewayError.upstreamClosed(upstream: upstream, beforeHead: true)) }
            let future = writeObserved(.data(.init(data: .byteBuffer(chunk), endStream: isLast)), isEnd: isLast, context: context)
            context.flush()
            scheduleTimerIfArmed()
            return future
        }
    }

    /// Ends a streamed body whose length was not known: an empty DATA with END_STREAM.
    func endRequest() -> EventLoopFuture<Void> {
        writeBodyPart(ByteBuffer(), isLast: true)
    }

    /// The request body could not be read, or the delegate's client left: the
    /// exchange fails and the stream is reset.
    func abort(_ error: any Error) {
        perform(machine.abort(error))
    }

    /// Writes `payload` with a promise whose completion goes to the machine.
    @discardableResult
    private func writeObserved(_ payload: HTTP2Frame.FramePayload, isEnd: Bool, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(payload), promise: promise)
        promise.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success:
                self.perform(self.machine.writeSucceeded(isEnd: isEnd, now: self.eventLoop.now))
            case .failure(let error):
                self.perform(self.machine.writeFailed(error))
            }
        }
        return promise.futureResult
    }
}

/// The request side of one stream, handed to its delegate: a value (a handler
/// reference), so handing it over allocates nothing. A stream carries one
/// exchange, so no exchange id is needed to refuse stale calls: after the end
/// the machine refuses them.
struct HTTP2StreamWriter: UpstreamRequestWriter {
    let handler: UpstreamHTTP2StreamHandler

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        handler.writeBodyPart(chunk, isLast: isLast)
    }

    func endRequest() -> EventLoopFuture<Void> {
        handler.endRequest()
    }

    func abort(_ error: any Error) {
        handler.abort(error)
    }

    func resumeReading() {
        handler.consumerDemand()
    }
}
