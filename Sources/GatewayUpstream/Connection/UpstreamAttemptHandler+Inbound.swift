import NIOCore

/// The response side and the channel's events, fed to the machine: the framer's
/// heads, body parts and ends, errors, close, and the reads held while the
/// delegate cannot take more.
extension UpstreamAttemptHandler {
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        framer.append(unwrapInboundIn(data))
        frameResponse()
    }

    /// Feeds the machine every event the bytes read so far make, until they run
    /// out or the connection is done with (a framing error, a failed attempt).
    private func frameResponse() {
        // One clock reading per read: its parts arrived together.
        var now: NIODeadline?
        do {
            while !machine.isClosed, let event = try framer.next() {
                switch event {
                case .head(let head):
                    let arrived = now ?? eventLoop.now
                    now = arrived
                    run(machine.responseHead(
                        status: head.status, fields: head.fields, declaredLength: head.declaredLength, keepAlive: head.keepAlive, now: arrived
                    ))
                case .body(let chunk):
                    let arrived = now ?? eventLoop.now
                    now = arrived
                    run(machine.responseBodyPart(chunk, now: arrived))
                case .end:
                    // Bytes after a complete response answer nothing that was asked.
                    run(machine.responseEnd(bytesFollow: framer.hasUnframedBytes))
                }
            }
        } catch {
            run(machine.malformedResponse(error))
        }
    }

    /// One read's parts are in: the delegate flushes them to its client at once.
    func channelReadComplete(context: ChannelHandlerContext) {
        if machine.isStreamingResponse { active?.delegate.upstreamReadComplete() }
        context.fireChannelReadComplete()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A body read until close ends here; any other response cut short fails below.
        if case .end = framer.inputClosed() { run(machine.responseEnd(bytesFollow: false)) }
        markClosed()
        context.fireChannelInactive()
    }

    // MARK: Back-pressure

    /// Holds the read while the delegate cannot take more; its demand releases it.
    func read(context: ChannelHandlerContext) {
        // The delegate is asked only while a response streams to it.
        let paused = machine.isStreamingResponse && (active?.delegate.upstreamShouldPauseReading ?? false)
        run(machine.readRequested(consumerPaused: paused))
    }

    /// The delegate can take more of the response.
    func consumerDemand(attemptID: Int) {
        run(machine.consumerDemand(attemptID: attemptID, now: eventLoop.now))
    }
}
