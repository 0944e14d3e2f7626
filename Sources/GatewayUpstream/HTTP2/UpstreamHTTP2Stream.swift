import GatewayCore
import NIOCore
import NIOHTTP2

/// One attempt's HTTP/2 stream on an upstream connection, driven by the
/// connection's own ``UpstreamHTTP2ConnectionHandler`` (no child channel, no
/// pipeline, no promise per stream): writes the request as HEADERS
/// (``HTTP2Fields``) and DATA (a buffered body with the HEADERS, a streamed one
/// through the ``UpstreamRequestWriter`` the delegate gets, END_STREAM on the
/// last), and hands the response to the exchange's ``UpstreamAttemptDelegate``:
/// the head (interim 1xx heads skipped), each DATA frame's bytes, a read's end,
/// trailers, the end; or the failure (a reset, a close, the timeout).
///
/// Frames go to the delegate while it can take more
/// (``UpstreamAttemptDelegate/upstreamShouldPauseReading``); meanwhile they are
/// held here, and the stream's receive window (``HTTP2InboundWindow``) is
/// refilled only as they are handed on (on ``UpstreamRequestWriter/resumeReading()``),
/// so a slow client holds the server back by flow control while the
/// connection's other streams go on.
///
/// The protocol state is an ``UpstreamHTTP2StreamStateMachine`` (here the request
/// side, in `+Inbound.swift` the response side and the held frames, in
/// `+Actions.swift` what the machine decides and the request timeout, which
/// runs on the connection's one timer).
/// All its methods run on the connection's event loop.
final class UpstreamHTTP2Stream {
    let id: HTTP2StreamID
    let connection: UpstreamHTTP2ConnectionHandler
    let recorder: AttemptRecorder
    let delegate: any UpstreamAttemptDelegate
    let ticket: HTTP2StreamTicket
    var machine: UpstreamHTTP2StreamStateMachine
    /// The machine asked for a read: frames go to the delegate as they come.
    var reading = false
    /// Frames that came while no read was asked for (a slow reader's), in order.
    var held: CircularBuffer<HTTP2Frame.FramePayload>?
    /// NIOHTTP2 closed the stream without an error while frames were held: the
    /// close is heard once they are handed on.
    var closedAfterHeld = false
    /// NIOHTTP2 closed the stream (both ends, or a reset): nothing more is written.
    var closedOnWire = false
    /// In the connection's list of streams that got frames in its current read.
    var inReadBatch = false
    var window: HTTP2InboundWindow

    init(
        id: HTTP2StreamID,
        connection: UpstreamHTTP2ConnectionHandler,
        isHEAD: Bool,
        recorder: AttemptRecorder,
        delegate: any UpstreamAttemptDelegate,
        ticket: HTTP2StreamTicket,
        requestTimeout: TimeAmount
    ) {
        self.id = id
        self.connection = connection
        self.recorder = recorder
        self.delegate = delegate
        self.ticket = ticket
        self.machine = UpstreamHTTP2StreamStateMachine(requestTimeout: requestTimeout, isHEAD: isHEAD)
        self.window = HTTP2InboundWindow(target: HTTP2Connection.streamWindow)
    }

    var eventLoop: any EventLoop { connection.eventLoop }
    var upstream: String { connection.upstream }
    var requestTimeout: TimeAmount { machine.timeout.timeout }

    /// The stream opens: the request goes out, the delegate gets its writer, the
    /// first read is asked for. Given, not kept: the stream holds no copy of the request.
    func start(_ request: ProxyRequest) {
        let body = UpstreamConnection.requestBody(of: request).0
        let endQueued: Bool
        if case .streamed = body { endQueued = false } else { endQueued = true }
        machine.start(endQueued: endQueued, now: eventLoop.now)
        ticket.markOpened()
        let headers = HTTP2Fields.requestHeaders(request, authority: connection.authority(of: request))
        switch body {
        case .none:
            // A bodyless request's HEADERS are not flow-controlled: NIOHTTP2 writes them at
            // once, so they count as sent there (no promise, callback and future per
            // request). Should the write fail, NIOHTTP2 reports the stream's error and the
            // machine hears that.
            write(.headers(.init(headers: headers, endStream: true)), promise: nil)
            perform(machine.writeSucceeded(isEnd: true, now: eventLoop.now))
        case .bytes(let buffer):
            // A failed HEADERS fails the DATA after it too: one observed write is enough.
            write(.headers(.init(headers: headers)), promise: nil)
            writeObserved(.data(.init(data: .byteBuffer(buffer), endStream: true)), isEnd: true)
        case .streamed:
            writeObserved(.headers(.init(headers: headers)), isEnd: false)
        }
        connection.io.flushSoon()
        scheduleTimerIfArmed()
        delegate.upstreamAttemptStarted(HTTP2StreamWriter(stream: self))
        requestRead()
    }

    // MARK: Writing

    /// Writes one chunk of a streamed body; with `isLast`, END_STREAM on it.
    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        switch machine.requestWrite(isEnd: isLast, now: eventLoop.now) {
        case .refuse(let beforeHead):
            return eventLoop.makeFailedFuture(GatewayError.upstreamClosed(upstream: upstream, beforeHead: beforeHead))
        case .write:
            guard !closedOnWire else {
                return eventLoop.makeFailedFuture(GatewayError.upstreamClosed(upstream: upstream, beforeHead: machine.isAwaitingHead))
            }
            let future = writeObserved(.data(.init(data: .byteBuffer(chunk), endStream: isLast)), isEnd: isLast)
            connection.io.flushSoon()
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

    /// The attempt was cancelled (its delegate let go): the stream is reset.
    func cancel() {
        perform(machine.channelClosed())
    }

    func write(_ payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?) {
        connection.io.write(NIOAny(HTTP2Frame(streamID: id, payload: payload)), promise: promise)
    }

    /// Writes `payload` with a promise whose completion goes to the machine.
    @discardableResult
    private func writeObserved(_ payload: HTTP2Frame.FramePayload, isEnd: Bool) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        write(payload, promise: promise)
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

/// The request side of one stream, handed to its delegate: a value (a stream
/// reference), so handing it over allocates nothing. A stream carries one
/// exchange, so no exchange id is needed to refuse stale calls: after the end
/// the machine refuses them.
struct HTTP2StreamWriter: UpstreamRequestWriter {
    let stream: UpstreamHTTP2Stream

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        stream.writeBodyPart(chunk, isLast: isLast)
    }

    func endRequest() -> EventLoopFuture<Void> {
        stream.endRequest()
    }

    func abort(_ error: any Error) {
        stream.abort(error)
    }

    func resumeReading() {
        stream.consumerDemand()
    }
}
