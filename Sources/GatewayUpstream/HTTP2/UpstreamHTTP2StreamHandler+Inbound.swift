import NIOCore
import NIOHTTP2

/// The response side and the stream's events, fed to the machine: HEADERS
/// (the head, interim heads, trailers), DATA, END_STREAM, RST_STREAM, errors,
/// the close, and the reads asked for while the delegate can take more.
extension UpstreamHTTP2StreamHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if let invalid = HTTP2Fields.invalidField(in: frame.headers) {
                perform(machine.malformedFields("\(invalid) with a character HTTP/1.1 does not allow"))
            } else if machine.isAwaitingHead {
                let status = HTTP2Fields.status(of: frame.headers)
                let declaredLength = HTTP2Fields.declaredLength(of: frame.headers)
                let action = machine.responseHead(status: status, declaredLength: declaredLength, endStream: frame.endStream, now: eventLoop.now)
                if case .forwardHead(let hasBody) = action, let status {
                    let head = HTTP2Fields.responseHead(status: status, headers: frame.headers, hasBody: hasBody)
                    recorder.responseHead(status: Int(status))
                    delegate.upstreamResponseHead(head)
                } else {
                    perform(action)
                }
            } else {
                let action = machine.responseTrailers(endStream: frame.endStream)
                if case .forwardTrailers = action {
                    delegate.upstreamResponseTrailers(HTTP2Fields.fields(of: frame.headers))
                } else {
                    perform(action)
                }
            }
            if frame.endStream { perform(machine.responseEnd()) }
        case .data(let frame):
            let action = machine.responseData(now: eventLoop.now)
            if case .forwardBody = action {
                if case .byteBuffer(let buffer) = frame.data, buffer.readableBytes > 0 {
                    delegate.upstreamResponseBodyPart(buffer)
                }
            } else {
                perform(action)
            }
            if frame.endStream { perform(machine.responseEnd()) }
        case .rstStream(let code):
            perform(machine.reset(code))
        default:
            break
        }
        scheduleTimerIfArmed()
    }

    /// One read's frames are in: the delegate flushes them to its client, and
    /// the next read is asked for if it can take more.
    func channelReadComplete(context: ChannelHandlerContext) {
        if machine.isStreamingResponse { delegate.upstreamReadComplete() }
        requestRead()
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // The stream was closed with a code: the server's RST_STREAM, or
        // REFUSED_STREAM for a stream above a GOAWAY's last stream id.
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            perform(machine.reset(closed.errorCode))
        } else {
            perform(machine.errorCaught(error))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        perform(machine.channelClosed())
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    /// Reads from the stream unless the delegate cannot take more (then the read is held).
    func requestRead() {
        let paused = machine.isStreamingResponse && delegate.upstreamShouldPauseReading
        perform(machine.readRequested(consumerPaused: paused))
    }

    /// The delegate can take more of the response: a held read goes out.
    func consumerDemand() {
        perform(machine.consumerDemand(now: eventLoop.now))
    }
}
