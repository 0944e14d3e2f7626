import GatewayCore
import NIOCore
import NIOHTTP1

/// One attempt an injection phase holds before it decides: the exchange writes
/// the request body into it (kept, up to `limit`: a larger one is refused with
/// 413 `body_too_large`, never passed on cut short), and once the request is all
/// in (or at once, for a bodyless one) `decide` runs with the body. The phase
/// then answers (``answer(_:)``, ``fail(_:)``) or lets the attempt go on to the
/// next transport (``pass(to:request:record:)``): the kept body is written
/// there, and from then on this object forwards the upstream's calls to the
/// exchange and the exchange's to the upstream's writer.
/// Only requests an injection phase looks at pay for it.
final class HeldAttempt: UpstreamRequestWriter, UpstreamAttemptDelegate {
    private let delegate: any UpstreamAttemptDelegate
    private let eventLoop: any EventLoop
    private let method: HTTPMethod
    private let limit: Int
    private var body: ByteBuffer?
    private var bodyEnded: Bool
    private let bodyless: Bool
    private var decide: ((HeldAttempt, ByteBuffer?) -> Void)?
    /// The next transport's writer, once passed on.
    private var upstreamWriter: (any UpstreamRequestWriter)?
    private var cancellation: UpstreamAttemptCancellation?
    private var delayed: Scheduled<Void>?
    private var done = false

    init(
        delegate: any UpstreamAttemptDelegate, request: ProxyRequest, eventLoop: any EventLoop, limit: Int = 1 << 20,
        decide: @escaping (HeldAttempt, ByteBuffer?) -> Void
    ) {
        self.delegate = delegate
        self.eventLoop = eventLoop
        self.method = request.method
        self.limit = limit
        self.bodyEnded = request.bodyLengthIsZero
        self.bodyless = request.bodyLengthIsZero
        self.decide = decide
    }

    /// Starts it (on the next tick: the exchange is not called back inside its own `startAttempt`).
    func start() -> UpstreamAttemptCancellation {
        eventLoop.assumeIsolated().execute {
            guard !self.done else { return }
            self.delegate.upstreamAttemptStarted(self)
            self.decideIfComplete()
        }
        // Called on the loop; the exchange drops it when it ends (no cycle outlives it).
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        return UpstreamAttemptCancellation { bound.value.cancel() }
    }

    private func decideIfComplete() {
        guard bodyEnded, let decide else { return }
        self.decide = nil
        decide(self, body)
    }

    // MARK: The phase's verdicts

    /// Plays `response` to the exchange (after its delay, a scheduled task on the loop).
    func answer(_ response: InjectedResponse) {
        guard let delay = response.delay, delay > .zero else { return play(response) }
        delayed = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { self.play(response) }
    }

    private func play(_ response: InjectedResponse) {
        guard !done else { return }
        done = true
        response.play(to: delegate, method: method)
    }

    /// The attempt fails as an upstream's would (a reset, or `not_mocked`).
    func fail(_ error: any Error) {
        guard !done else { return }
        done = true
        delegate.upstreamAttemptFailed(error)
    }

    /// The attempt goes on to `next` (after `delay`), with the body kept so far.
    func pass(to next: any UpstreamTransport, request: ProxyRequest, record: ExchangeRecord, after delay: Duration? = nil) {
        guard let delay, delay > .zero else { return startNext(next, request: request, record: record) }
        delayed = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { self.startNext(next, request: request, record: record) }
    }

    private func startNext(_ next: any UpstreamTransport, request: ProxyRequest, record: ExchangeRecord) {
        guard !done else { return }
        record.upstreamAnswered()
        cancellation = next.startAttempt(request, record: record, on: eventLoop, delegate: self)
    }

    private func cancel() {
        delayed?.cancel()
        cancellation?.cancel()
        done = true
    }

    // MARK: UpstreamRequestWriter (the exchange's side)

    func writeBodyPart(_ chunk: ByteBuffer, isLast: Bool) -> EventLoopFuture<Void> {
        if let upstreamWriter { return upstreamWriter.writeBodyPart(chunk, isLast: isLast) }
        keep(chunk)
        if isLast { bodyEnded = true; decideIfComplete() }
        return eventLoop.makeSucceededVoidFuture()
    }

    func endRequest() -> EventLoopFuture<Void> {
        if let upstreamWriter { return upstreamWriter.endRequest() }
        bodyEnded = true
        decideIfComplete()
        return eventLoop.makeSucceededVoidFuture()
    }

    func abort(_ error: any Error) {
        if let upstreamWriter { return upstreamWriter.abort(error) }
        cancel()
    }

    func resumeReading() {
        upstreamWriter?.resumeReading()
    }

    private func keep(_ chunk: ByteBuffer) {
        guard !done else { return }
        guard (body?.readableBytes ?? 0) + chunk.readableBytes <= limit else {
            // A body cut short must never go on as if whole: the request is refused, whole (413).
            decide = nil
            fail(GatewayError(
                .bodyTooLarge, "the request body is larger than the \(limit >> 10) KiB a mock or replay rule of this upstream can hold to match on"
            ))
            return
        }
        var chunk = chunk
        if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
    }

    // MARK: UpstreamAttemptDelegate (the next transport's side, once passed on)

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        upstreamWriter = writer
        guard !bodyless else { return }
        let kept = body ?? ByteBuffer()
        body = nil
        _ = kept.readableBytes > 0 ? writer.writeBodyPart(kept, isLast: true) : writer.endRequest()
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) { delegate.upstreamResponseHead(head) }
    func upstreamResponseBodyPart(_ buffer: ByteBuffer) { delegate.upstreamResponseBodyPart(buffer) }
    func upstreamReadComplete() { delegate.upstreamReadComplete() }
    func upstreamResponseTrailers(_ trailers: HTTPHeaders) { delegate.upstreamResponseTrailers(trailers) }
    func upstreamResponseEnd() { done = true; delegate.upstreamResponseEnd() }
    func upstreamAttemptFailed(_ error: any Error) { done = true; delegate.upstreamAttemptFailed(error) }
    func upstreamUpgraded(_ head: UpstreamResponseHead, tunnel: UpstreamTunnel) { done = true; delegate.upstreamUpgraded(head, tunnel: tunnel) }
    var upstreamShouldPauseReading: Bool { delegate.upstreamShouldPauseReading }
}
