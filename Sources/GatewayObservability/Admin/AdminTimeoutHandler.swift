import GatewayConfig
import GatewayCore
import NIOCore

/// The admin connection's timeouts, with one timer. First in the pipeline,
/// before the HTTP decoder, so it sees the bytes of a request before there is
/// a head:
///
/// - **idle** (`limits.idle_timeout`): a connection waiting for its next
///   request, with no byte of it received, is closed quietly after this;
/// - **request** (`limits.header_timeout`): from the first byte of a request,
///   all of it (head and any body) must arrive within this; otherwise the
///   connection answers 408 `head_timeout` and closes. A half-sent request
///   does not hold a descriptor.
///
/// While a request is answered there is no deadline (the routes are quick).
/// ``AdminExchangeMarker``, after the decoder, tells it when a request has
/// arrived and when its response is written; both run on the connection's loop.
final class AdminTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum Phase {
        /// Between requests, nothing of the next one received: the idle deadline runs.
        case waiting
        /// Bytes of a request arrived, not all of it yet: the request deadline runs.
        case receiving
        /// The request arrived; its response is being made: no deadline.
        case answering
        /// Timed out or gone: nothing more to do.
        case done
    }

    private let headerTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    private var phase = Phase.waiting
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(headerTimeout: TimeAmount, idleTimeout: TimeAmount) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { startWaiting() }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        startWaiting()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Before the decoder runs: the request deadline starts with the first
        // byte, and a request complete in this read ends it in `requestReceived`.
        if phase == .waiting {
            phase = .receiving
            schedule(in: headerTimeout)
        }
        context.fireChannelRead(data)
    }

    // MARK: Told by AdminExchangeMarker

    /// A whole request arrived: no deadline while it is answered.
    func requestReceived() {
        guard phase != .done else { return }
        phase = .answering
        timer?.cancel()
        timer = nil
    }

    /// A response's end was written: the connection waits for the next request.
    func responseSent() {
        guard phase != .done else { return }
        startWaiting()
    }

    // MARK: The timer

    private func startWaiting() {
        guard phase != .done else { return }
        phase = .waiting
        schedule(in: idleTimeout)
    }

    /// Replaces the pending deadline, if any, with one `delay` from now.
    private func schedule(in delay: TimeAmount) {
        guard let context else { return }
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            timerFired()
        }
    }

    private func timerFired() {
        timer = nil
        guard let context else { return }
        switch phase {
        case .waiting:
            phase = .done
            context.close(promise: nil)
        case .receiving:
            phase = .done
            // No response is under way: the answer goes straight to the socket, then the connection closes.
            let written = context.eventLoop.makePromise(of: Void.self)
            context.writeAndFlush(NIOAny(Self.timeoutResponse(headerTimeout, allocator: context.channel.allocator)), promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case .answering, .done:
            break
        }
    }

    private func stop() {
        phase = .done
        timer?.cancel()
        timer = nil
    }

    /// `408 Request Timeout` with the `head_timeout` JSON body, `Connection: close`.
    static func timeoutResponse(_ limit: TimeAmount, allocator: ByteBufferAllocator) -> ByteBuffer {
        let limitText = ConfigUnits.formatDuration(.nanoseconds(limit.nanoseconds))
        let message = "the request did not arrive within \(limitText) (limits.header_timeout)"
        let body = "{\"error\":\"head_timeout\",\"message\":\(JSONString.quote(message))}\n"
        let head = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Cache-Control: no-store\r\nX-Gateway-Error: head_timeout\r\nConnection: close\r\n\r\n"
        return allocator.buffer(string: head + body)
    }
}
