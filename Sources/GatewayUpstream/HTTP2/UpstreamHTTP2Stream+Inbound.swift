import NIOCore
import NIOHTTP2

/// The response side and the stream's events, fed to the machine: HEADERS
/// (the head, interim heads, trailers), DATA, END_STREAM, RST_STREAM, errors,
/// the close; the frames held while the delegate cannot take more, and the
/// window updates that follow them as they are handed on.
extension UpstreamHTTP2Stream {
    /// A frame of this stream, from the connection's handler: handed on now
    /// while a read is asked for and nothing is held before it, held otherwise.
    func receive(_ payload: HTTP2Frame.FramePayload) {
        if reading, held?.isEmpty ?? true {
            _ = connection.io.join(self)
            process(payload)
            return
        }
        if case .data(let data) = payload { window.held(Self.flowControlledLength(data)) }
        if held == nil { held = CircularBuffer(initialCapacity: 8) }
        held!.append(payload)
    }

    /// NIOHTTP2 reported this stream's receive window.
    func inboundWindowChanged(to size: Int) {
        guard let increment = window.reported(size) else { return }
        sendWindowUpdate(increment)
    }

    /// NIOHTTP2 closed the stream: with a code (a reset, REFUSED_STREAM above a
    /// GOAWAY's last stream id, a stream error it found), the exchange fails;
    /// without one (both ends done), once the frames held are handed on.
    func closed(reason: HTTP2ErrorCode?) {
        closedOnWire = true
        if let reason {
            held = nil
            perform(machine.reset(reason))
        } else if held?.isEmpty ?? true {
            perform(machine.channelClosed())
        } else {
            closedAfterHeld = true
        }
    }

    /// An error NIOHTTP2 reported for this stream (a write it refused).
    func errorCaught(_ error: any Error) {
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            perform(machine.reset(closed.errorCode))
        } else {
            perform(machine.errorCaught(error))
        }
    }

    /// The connection closed under the stream.
    func connectionClosed() {
        closedOnWire = true
        held = nil
        perform(machine.channelClosed())
    }

    private func process(_ payload: HTTP2Frame.FramePayload) {
        switch payload {
        case .headers(let frame):
            let section = HTTP2ResponseSection(frame.headers)
            if let invalid = section.invalidField {
                perform(machine.malformedFields("\(invalid) with a character HTTP/1.1 does not allow"))
            } else if section.invalidLength {
                perform(machine.malformedFields("content-length that is not one decimal length"))
            } else if machine.isAwaitingHead {
                let action = machine.responseHead(
                    status: section.status, declaredLength: section.declaredLength, endStream: frame.endStream, now: eventLoop.now
                )
                if case .forwardHead(let hasBody) = action, let status = section.status {
                    recorder.responseHead(status: Int(status))
                    delegate.upstreamResponseHead(section.head(status: status, hasBody: hasBody))
                } else {
                    perform(action)
                }
            } else {
                let action = machine.responseTrailers(endStream: frame.endStream)
                if case .forwardTrailers = action {
                    delegate.upstreamResponseTrailers(section.fields)
                } else {
                    perform(action)
                }
            }
            if frame.endStream { perform(machine.responseEnd()) }
        case .data(let frame):
            let action = machine.responseData(length: frame.data.readableBytes, now: eventLoop.now)
            if case .forwardBody = action {
                if case .byteBuffer(let buffer) = frame.data, buffer.readableBytes > 0 {
                    delegate.upstreamResponseBodyPart(buffer)
                }
            } else {
                perform(action)
            }
            if frame.endStream { perform(machine.responseEnd()) }
        case .rstStream(let code):
            closedOnWire = true  // no RST_STREAM back
            perform(machine.reset(code))
        default:
            break
        }
        scheduleTimerIfArmed()
    }

    /// The connection's read is over (or held frames were handed on): the
    /// delegate flushes them to its client, and the next read is asked for if
    /// it can take more.
    func readComplete() {
        reading = false
        if machine.isStreamingResponse { delegate.upstreamReadComplete() }
        requestRead()
    }

    // MARK: Back-pressure

    /// Reads unless the delegate cannot take more (then the read is held).
    func requestRead() {
        let paused = machine.isStreamingResponse && delegate.upstreamShouldPauseReading
        perform(machine.readRequested(consumerPaused: paused))
    }

    /// The delegate can take more of the response: a held read goes out.
    func consumerDemand() {
        perform(machine.consumerDemand(now: eventLoop.now))
    }

    /// The machine asked for a read: held frames go on first, as one read
    /// (its end is the connection's read's, or made here outside one), and
    /// the window grows by what they carried.
    func startReading() {
        reading = true
        guard var frames = held, !frames.isEmpty else { return }
        held = nil
        let inConnectionRead = connection.io.join(self)
        var handedOn = 0
        while !machine.isDone, let payload = frames.popFirst() {
            if case .data(let data) = payload { handedOn += Self.flowControlledLength(data) }
            process(payload)
        }
        if handedOn > 0, !machine.isDone, let increment = window.handedOn(handedOn) { sendWindowUpdate(increment) }
        if closedAfterHeld {
            closedAfterHeld = false
            perform(machine.channelClosed())
        }
        if !inConnectionRead { readComplete() }
    }

    private func sendWindowUpdate(_ increment: Int) {
        guard !closedOnWire, !machine.isDone else { return }
        write(.windowUpdate(windowSizeIncrement: increment), promise: nil)
        connection.io.flushSoon()
    }

    /// What a DATA frame takes of the window: its bytes and its padding (with the length octet).
    static func flowControlledLength(_ data: HTTP2Frame.FramePayload.Data) -> Int {
        data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
    }
}
