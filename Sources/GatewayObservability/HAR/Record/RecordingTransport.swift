public import GatewayCore
public import NIOCore
import NIOHTTP1

/// `record:` of an upstream: the transport right in front of the pool, so it
/// sees exactly what went over the network (no mock, replayed entry or
/// injected fault reaches it). Each attempt's request and response, bodies
/// included (up to ``bodyLimit`` each), are copied as they pass and handed to
/// the ``HARRecorder`` when the response ends; the recorder redacts and writes
/// them off the event loop. An attempt that fails is not recorded.
public final class RecordingTransport: UpstreamTransport {
    /// Bodies beyond this are recorded cut, with a comment saying so.
    public static let bodyLimit = 8 * 1024 * 1024

    let recorder: HARRecorder
    let next: any UpstreamTransport

    public init(recorder: HARRecorder, next: any UpstreamTransport) {
        self.recorder = recorder
        self.next = next
    }

    public func startAttempt(
        _ request: ProxyRequest, record: ExchangeRecord, on eventLoop: any EventLoop, delegate: any UpstreamAttemptDelegate
    ) -> UpstreamAttemptCancellation {
        let attempt = RecordingAttempt(request: request, recorder: recorder, delegate: delegate, eventLoop: eventLoop)
        return next.startAttempt(request, record: record, on: eventLoop, delegate: attempt)
    }
}

/// One recorded attempt, between the pool and the exchange, on the attempt's loop.
final class RecordingAttempt: UpstreamAttemptDelegate, UpstreamRequestWriter {
    private let delegate: any UpstreamAttemptDelegate
    private let recorder: HARRecorder
    private let eventLoop: any EventLoop
    private var writer: (any UpstreamRequestWriter)?
    private var exchange: RecordedExchange

    init(request: ProxyRequest, recorder: HARRecorder, delegate: any UpstreamAttemptDelegate, eventLoop: any EventLoop) {
        self.delegate = delegate
        self.recorder = recorder
        self.eventLoop = eventLoop
        exchange = RecordedExchange(request: request)
    }

    // MARK: UpstreamAttemptDelegate (the pool's side)

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        delegate.upstreamAttemptStarted(self)
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        exchange.status = Int(head.status.code)
        exchange.responseHeaders = head.headers
        delegate.upstreamResponseHead(head)
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        exchange.responseBody.keep(buffer)
        delegate.upstreamResponseBodyPart(buffer)
    }

    func upstreamReadComplete() { delegate.upstreamReadComplete() }
    func upstreamResponseTrailers(_ trailers: HTTPHeaders) { delegate.upstreamResponseTrailers(trailers) }

    func upstreamResponseEnd() {
        exchange.duration = ContinuousClock.now - exchange.startedAt
        recorder.append(exchange)
        delegate.upstreamResponseEnd()
    }

    func upstreamAttemptFailed(_ error: any Error) { delegate.upstreamAttemptFailed(error) }
    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) { delegate.upstreamUpgraded(head, tunnel: tunnel) }
    var upstreamShouldPauseReading: Bool { delegate.upstreamShouldPauseReading }

    // MARK: UpstreamRequestWriter (the exchange's side)

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        exchange.requestBody.keep(chunk)
        return writer?.writeBodyPart(chunk, isLast: isLast) ?? eventLoop.makeSucceededVoidFuture()
    }

    func endRequest() -> EventLoopFuture<Void> { writer?.endRequest() ?? eventLoop.makeSucceededVoidFuture() }
    func abort(_ error: any Error) { writer?.abort(error) }
    func resumeReading() { writer?.resumeReading() }
}
