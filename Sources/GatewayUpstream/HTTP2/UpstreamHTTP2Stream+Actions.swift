import GatewayCore
import NIOCore
import NIOHTTP2

/// Performs what the machine decided (but for the forwarding of a frame's
/// parts, done where the frame is), and tells the connection's timer when the
/// request timeout is due.
/// The stream's slot goes back to the pool before the delegate hears of the
/// end or the failure: its next request may take it.
extension UpstreamHTTP2Stream {
    func perform(_ action: UpstreamHTTP2StreamStateMachine.Action) {
        switch action {
        case .none, .forwardHead, .forwardBody, .forwardTrailers:
            break
        case .read:
            startReading()
        case .requestSent:
            recorder.requestSent()
        case .finish(let resetStream):
            recorder.ended()
            // RST_STREAM (CANCEL): the server stops waiting for the rest of the request.
            if resetStream { resetOnWire() }
            connection.forget(self)
            ticket.releaseSlot()
            delegate.upstreamResponseEnd()
        case .fail(let failure):
            let error = gatewayError(for: failure)
            // Recorded before the delegate hears of it, so that it sees the final record.
            recorder.failed(error)
            resetOnWire()
            connection.forget(self)
            ticket.releaseSlot()
            delegate.upstreamAttemptFailed(error)
        case .notOpened:
            connection.forget(self)
            ticket.openFailed(ConnectionClosedBeforeUse(upstream: upstream))
        }
        scheduleTimerIfArmed()
    }

    /// Sends RST_STREAM (CANCEL) unless NIOHTTP2 closed the stream already.
    private func resetOnWire() {
        guard !closedOnWire else { return }
        closedOnWire = true
        held = nil
        write(.rstStream(.cancel), promise: nil)
        connection.io.flushSoon()
    }

    func gatewayError(for failure: UpstreamHTTP2StreamStateMachine.Failure) -> any Error {
        switch failure {
        case .error(let error, let beforeHead):
            if let closed = error as? NIOHTTP2Errors.StreamClosed {
                return Self.resetError(closed.errorCode, beforeHead: beforeHead, upstream: upstream)
            }
            // A stream opened after the server's GOAWAY: it was not processed.
            if error is NIOHTTP2Errors.CreatedStreamAfterGoaway {
                return Self.resetError(.refusedStream, beforeHead: beforeHead, upstream: upstream)
            }
            return GatewayError.attemptFailure(error, upstream: upstream)
        case .reset(let code, let beforeHead):
            return Self.resetError(code, beforeHead: beforeHead, upstream: upstream)
        case .closed(let beforeHead):
            return GatewayError.upstreamClosed(upstream: upstream, beforeHead: beforeHead)
        case .timedOut(let beforeHead):
            let seconds = Double(requestTimeout.nanoseconds) / 1e9
            return GatewayError(
                .requestTimeout,
                beforeHead ? "the upstream did not answer within \(seconds)s" : "the upstream stalled for \(seconds)s mid-exchange",
                upstream: upstream
            )
        case .protocolViolation(let message):
            return GatewayError(.upstreamProtocolError, "the upstream sent a malformed HTTP/2 response: \(message)", upstream: upstream)
        }
    }

    /// REFUSED_STREAM (RFC 9113 §8.7: the server did not process the request)
    /// is a `connect_failed`, retried as a failed connect is; any other code
    /// is a reset stream.
    static func resetError(_ code: HTTP2ErrorCode, beforeHead: Bool, upstream: String) -> GatewayError {
        if code == .refusedStream, beforeHead {
            return GatewayError(.connectFailed, "the upstream refused the HTTP/2 stream (REFUSED_STREAM) without processing the request", upstream: upstream)
        }
        return GatewayError(
            .connectionReset,
            beforeHead ? "the upstream reset the HTTP/2 stream before the response head" : "the upstream reset the HTTP/2 stream mid-response",
            upstream: upstream,
            causeDescription: "RST_STREAM with error code \(code.networkCode)"
        )
    }

    // MARK: The request timeout (on the connection's one timer)

    /// Tells the connection when this stream is due, if its timeout is armed.
    func scheduleTimerIfArmed() {
        guard let deadline = machine.timeout.deadline else { return }
        connection.ensureTimer(by: deadline)
    }

    /// The connection's timer fired: the machine hears it if this stream's
    /// deadline passed (it fails, or it made progress and is due later).
    func deadlineCheck(now: NIODeadline) {
        guard let deadline = machine.timeout.deadline else { return }
        if deadline <= now {
            perform(machine.timerFired(now: now))
        } else {
            connection.ensureTimer(by: deadline)
        }
    }
}
