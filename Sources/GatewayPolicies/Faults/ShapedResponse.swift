import GatewayCore
import NIOCore
import NIOHTTP1

/// One attempt's response on its way to the app under a body fault
/// (``FaultTransport`` at `responseBody`), between the next transport and the exchange,
/// on the attempt's event loop:
///
/// - `slow`: the head goes at once; body bytes wait in a queue and leave in
///   slices every 100 ms, a tenth of the rate each, on a scheduled task (no
///   thread waits). While more than ``queueLimit`` bytes wait, the upstream is
///   not read (its back-pressure), so memory stays bounded. Trailers and the
///   end follow the last slice.
/// - `reset`: the body goes on until `afterBytes` (one byte short of a
///   declared length when that is not longer, so the client never gets it
///   whole), then the upstream attempt is cancelled and the exchange fails
///   with ``GatewayError/Code/connectionReset``: the client's connection
///   closes mid-body. A response without a body passes untouched.
///
/// The fault is noted on the record when it acts (``Injection``): a slow body
/// as a delay of the upstream's own response, a reset as the response.
final class ShapedResponse: UpstreamAttemptDelegate, UpstreamRequestWriter {
    enum Shape {
        case slow(bytesPerSecond: Int)
        case reset(afterBytes: Int)
    }

    static let tick = TimeAmount.milliseconds(100)
    static let queueLimit = 64 * 1024

    private let shape: Shape
    private let delegate: any UpstreamAttemptDelegate
    private let record: ExchangeRecord
    private let injection: Injection
    private let upstreamName: String
    private let eventLoop: any EventLoop
    /// Cancels the next transport's attempt.
    var upstream: UpstreamAttemptCancellation?
    private var writer: (any UpstreamRequestWriter)?
    private var done = false

    // slow
    private var queue = CircularBuffer<ByteBuffer>()
    private var queued = 0
    private var trailers: HTTPHeaders?
    private var ended = false
    private var timer: Scheduled<Void>?
    private var pausedUpstream = false

    // reset
    private var sent = 0
    private var limit = Int.max

    init(_ shape: Shape, delegate: any UpstreamAttemptDelegate, record: ExchangeRecord, injection: Injection, upstream: String, eventLoop: any EventLoop) {
        self.shape = shape
        self.delegate = delegate
        self.record = record
        self.injection = injection
        self.upstreamName = upstream
        self.eventLoop = eventLoop
    }

    /// The client went away.
    func cancel() {
        done = true
        timer?.cancel()
        upstream?.cancel()
    }

    // MARK: UpstreamAttemptDelegate (the next transport's side)

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        delegate.upstreamAttemptStarted(self)
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        guard !done else { return }
        if head.hasBody {
            switch shape {
            case .slow:
                record.noteInjection(injection, answered: false)
            case .reset(let after):
                limit = head.declaredLength.map { $0 > 0 ? min(after, $0 - 1) : after } ?? after
            }
        }
        delegate.upstreamResponseHead(head)
        if head.hasBody, case .reset = shape, limit == 0 { reset() }
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        guard !done else { return }
        switch shape {
        case .slow:
            queue.append(buffer)
            queued += buffer.readableBytes
            scheduleSlice()
        case .reset:
            let room = limit - sent
            guard buffer.readableBytes >= room else {
                sent += buffer.readableBytes
                return delegate.upstreamResponseBodyPart(buffer)
            }
            if room > 0 { delegate.upstreamResponseBodyPart(buffer.getSlice(at: buffer.readerIndex, length: room)!) }
            reset()
        }
    }

    func upstreamReadComplete() {
        guard !done, case .reset = shape else { return }
        delegate.upstreamReadComplete()
    }

    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {
        guard !done else { return }
        if case .slow = shape, queued > 0 { self.trailers = trailers } else { delegate.upstreamResponseTrailers(trailers) }
    }

    func upstreamResponseEnd() {
        guard !done else { return }
        switch shape {
        case .slow where queued > 0:
            ended = true
        case .reset where limit != .max:
            // The body ended before the bound (a body of unknown length): the client still never gets its end.
            reset()
        default:
            done = true
            delegate.upstreamResponseEnd()
        }
    }

    func upstreamAttemptFailed(_ error: any Error) {
        guard !done else { return }
        done = true
        timer?.cancel()
        delegate.upstreamAttemptFailed(error)
    }

    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) {
        guard !done else { return }
        done = true
        delegate.upstreamUpgraded(head, tunnel: tunnel)
    }

    var upstreamShouldPauseReading: Bool {
        if queued >= Self.queueLimit {
            pausedUpstream = true
            return true
        }
        return delegate.upstreamShouldPauseReading
    }

    // MARK: The shapes

    private func reset() {
        done = true
        record.noteInjection(injection, answered: true)
        upstream?.cancel()
        delegate.upstreamReadComplete()
        delegate.upstreamAttemptFailed(GatewayError(
            .connectionReset, "injected fault: the connection is reset after \(sent) body bytes", upstream: upstreamName
        ))
    }

    private func scheduleSlice() {
        guard timer == nil, case .slow(let perSecond) = shape else { return }
        let slice = max(1, perSecond / 10)
        timer = eventLoop.assumeIsolated().scheduleTask(in: Self.tick) {
            self.timer = nil
            self.sendSlice(of: slice)
        }
    }

    private func sendSlice(of size: Int) {
        guard !done else { return }
        var left = size
        while left > 0, var first = queue.first {
            let part = first.readSlice(length: min(left, first.readableBytes))!
            left -= part.readableBytes
            queued -= part.readableBytes
            if first.readableBytes == 0 { queue.removeFirst() } else { queue[queue.startIndex] = first }
            delegate.upstreamResponseBodyPart(part)
        }
        delegate.upstreamReadComplete()
        if pausedUpstream, queued < Self.queueLimit / 2 {
            pausedUpstream = false
            writer?.resumeReading()
        }
        if queued > 0 { return scheduleSlice() }
        if ended {
            done = true
            if let trailers { delegate.upstreamResponseTrailers(trailers) }
            delegate.upstreamResponseEnd()
        }
    }

    // MARK: UpstreamRequestWriter (the exchange's side): the request goes through

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        writer?.writeBodyPart(chunk, isLast: isLast) ?? eventLoop.makeSucceededVoidFuture()
    }

    func endRequest() -> EventLoopFuture<Void> {
        writer?.endRequest() ?? eventLoop.makeSucceededVoidFuture()
    }

    func abort(_ error: any Error) {
        writer?.abort(error)
    }

    func resumeReading() {
        // While the queue is full, the slices release the upstream (``sendSlice(of:)``).
        guard queued < Self.queueLimit else { return }
        writer?.resumeReading()
    }
}
