import GatewayCore
import NIOCore
import NIOHTTP1

/// The connection's side of ``ExchangeClient`` and the whole responses the
/// gateway makes itself: what the connection's state says (keep-alive, the
/// end of an exchange, a close after the write) is decided here; the bytes
/// are written by the connection's ``HTTP1ResponseWriter``.
extension ClientConnectionHandler: ExchangeClient {
    /// The response head went out: a failure can no longer be answered with a response.
    var responseStarted: Bool { machine.responseStarted }

    var isWritable: Bool { context?.channel.isWritable ?? true }

    func requestBodyDemand() {
        resumeReading()
    }

    /// `100 Continue` (never to an HTTP/1.0 client: RFC 9110 §10.1.1).
    func writeContinue(info: ExchangeInfo) {
        guard info.version.minor >= 1 else { return }
        writer.writeContinue()
    }

    /// Mid-response: the client sees the truncation as a closed connection.
    func abortResponse() {
        writer.dropPendingHead()  // a head not written yet is dropped; what was written goes out before the close
        machine.closeAfterWrite()
        if let context { close(context) }
    }

    /// Takes the response head of the exchange in flight (the writer sends it
    /// with the first body part, or before anything else); returns whether
    /// its body is written.
    func writeResponseHead(_ head: UpstreamResponseHead, info: ExchangeInfo) -> Bool {
        let framing = writer.takeHead(
            head, method: info.method, version: info.version,
            keepAlive: machine.keepAliveWanted && !environment.tracker.isDraining
        )
        _ = machine.responseHead(keepAlive: framing.keepAlive)
        return framing.writesBody
    }

    /// A part of the response body, written unflushed: the exchange flushes
    /// (``flushResponse()``) once the parts of one upstream read are written.
    func writeResponseBodyPart(_ buffer: ByteBuffer) {
        writer.writeBodyPart(buffer)
    }

    func flushResponse() {
        writer.flush()
    }

    /// Closes the connection once what waits for the end of the tick is
    /// flushed (a close drops writes not flushed).
    func close(_ context: ChannelHandlerContext) {
        writer.flushDeferred()
        context.close(promise: nil)
    }

    /// Writes held for the end of the tick go out (``ClientTimeoutOwner``: before an idle connection closes).
    func flushDeferred() {
        writer.flushDeferred()
    }

    /// Ends the response of the exchange in flight.
    func writeResponseEnd(trailers: HTTPHeaders?) {
        guard context != nil else { return }
        switch machine.responseEnd() {
        case .exchangeDone(let keepAlive):
            if keepAlive {
                lastWrite = writer.writeEnd(observed: environment.tracker.isDraining, trailers: trailers)
            } else {
                closeWhenWritten(writer.writeEnd(observed: true, trailers: trailers))
            }
            exchangeDone(keepAlive: keepAlive)
        case .awaitRequestEnd(let keepAlive):
            // The rest of the request body is read and dropped (up to a limit), or the connection closes.
            if keepAlive {
                _ = writer.writeEnd(observed: false, trailers: trailers)
                resumeReading()
            } else {
                closeWhenWritten(writer.writeEnd(observed: true, trailers: trailers))
            }
        case .forward, .queue, .ignore:
            break
        }
    }

    /// A whole response the gateway makes itself for the exchange in flight
    /// (a refusal, a 407, an error before the upstream answered). Returns the body bytes written.
    @discardableResult
    func respond(_ response: ProxyResponse, info: ExchangeInfo, addVia: Bool = false, keepAlive: Bool = true) -> Int {
        let via = addVia ? RequestRouter.responseVia : nil
        let framing = ResponseFraming(
            status: response.status, headers: response.headers, declaredLength: response.body.declaredLength,
            requestMethod: info.method, requestVersion: info.version,
            keepAlive: keepAlive && machine.keepAliveWanted && !environment.tracker.isDraining, via: via
        )
        _ = machine.responseHead(keepAlive: framing.keepAlive)
        let written = writer.writeWhole(framing, body: response.body)
        writeResponseEnd(trailers: nil)
        return written
    }

    /// A whole response on a connection that closes after it (a broken head, the drain timeout).
    func writeFinal(_ response: ProxyResponse, method: HTTPMethod, version: HTTPVersion) {
        guard context != nil else { return }
        let framing = ResponseFraming(
            status: response.status, headers: response.headers, declaredLength: response.body.declaredLength,
            requestMethod: method, requestVersion: version, keepAlive: false
        )
        _ = writer.writeWhole(framing, body: response.body)
        closeWhenWritten(writer.writeEnd(observed: true))
    }

    /// Closes the connection once `write` completed (its bytes handed to the socket).
    func closeWhenWritten(_ write: EventLoopFuture<Void>?) {
        guard let context else { return }
        guard let write else {
            close(context)
            return
        }
        let channel = context.channel
        write.whenComplete { _ in channel.close(promise: nil) }
    }
}
