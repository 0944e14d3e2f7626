import GatewayCore
import NIOCore
import NIOHTTP1

/// Writing responses: streamed ones for exchanges, whole ones the gateway makes itself.
extension ClientConnectionHandler {
    /// Writes the response head of the exchange in flight; returns its framing.
    func sendResponseHead(status: HTTPResponseStatus, headers: HTTPHeaders, declaredLength: Int?, info: ExchangeInfo) -> ResponseFraming {
        var headers = headers
        HopByHopHeaders.addVia(to: &headers, version: .http1_1, pseudonym: RequestRouter.viaPseudonym)
        let framing = ResponseFraming(
            status: status, headers: headers, declaredLength: declaredLength,
            requestMethod: info.method, requestVersion: info.version,
            keepAlive: machine.keepAliveWanted && !environment.tracker.isDraining
        )
        _ = machine.responseHead(keepAlive: framing.keepAlive)
        info.observeResponseHead(status: status, headers: headers)
        context?.write(wrapOutboundOut(.head(framing.head)), promise: nil)
        return framing
    }

    /// A part of the response body, written unflushed: the exchange flushes
    /// (``flushResponse()``) once the parts of one upstream read are written.
    func sendResponseBodyPart(_ buffer: ByteBuffer) {
        context?.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
    }

    func flushResponse() {
        context?.flush()
    }

    /// Ends the response of the exchange in flight.
    func sendResponseEnd() {
        guard let context else { return }
        switch machine.responseEnd() {
        case .exchangeDone(let keepAlive):
            if keepAlive {
                if environment.tracker.isDraining {
                    lastWrite = context.writeAndFlush(wrapOutboundOut(.end(nil)))
                } else {
                    lastWrite = nil
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                }
            } else {
                closeWhenWritten(context.writeAndFlush(wrapOutboundOut(.end(nil))))
            }
            exchangeDone(keepAlive: keepAlive)
        case .awaitRequestEnd(let keepAlive):
            // The rest of the request body is read and dropped (up to a limit), or the connection closes.
            if keepAlive {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                resumeReading()
            } else {
                closeWhenWritten(context.writeAndFlush(wrapOutboundOut(.end(nil))))
            }
        case .forward, .queue, .ignore:
            break
        }
    }

    /// A whole response the gateway makes itself for the exchange in flight
    /// (a refusal, a 407, an error before the upstream answered). Returns the body bytes written.
    @discardableResult
    func respond(_ response: ProxyResponse, info: ExchangeInfo, addVia: Bool = false, keepAlive: Bool = true) -> Int {
        var headers = response.headers
        if addVia { HopByHopHeaders.addVia(to: &headers, version: .http1_1, pseudonym: RequestRouter.viaPseudonym) }
        let framing = ResponseFraming(
            status: response.status, headers: headers, declaredLength: response.body.declaredLength,
            requestMethod: info.method, requestVersion: info.version,
            keepAlive: keepAlive && machine.keepAliveWanted && !environment.tracker.isDraining
        )
        _ = machine.responseHead(keepAlive: framing.keepAlive)
        info.observeResponseHead(status: response.status, headers: headers)
        let written = writeWhole(framing, body: response.body)
        sendResponseEnd()
        return written
    }

    /// A whole response on a connection that closes after it (a broken head, the drain timeout).
    func writeFinal(_ response: ProxyResponse, method: HTTPMethod, version: HTTPVersion) {
        guard let context else { return }
        let framing = ResponseFraming(
            status: response.status, headers: response.headers, declaredLength: response.body.declaredLength,
            requestMethod: method, requestVersion: version, keepAlive: false
        )
        _ = writeWhole(framing, body: response.body)
        closeWhenWritten(context.writeAndFlush(wrapOutboundOut(.end(nil))))
    }

    /// Head and buffered body of a whole response (the end is written by the caller).
    private func writeWhole(_ framing: ResponseFraming, body: ProxyBody) -> Int {
        guard let context else { return 0 }
        context.write(wrapOutboundOut(.head(framing.head)), promise: nil)
        guard !framing.bodyless, case .bytes(let buffer) = body.storage, buffer.readableBytes > 0 else { return 0 }
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        return buffer.readableBytes
    }

    /// Closes the connection once `write` completed (its bytes handed to the socket).
    func closeWhenWritten(_ write: EventLoopFuture<Void>?) {
        guard let context else { return }
        guard let write else {
            context.close(promise: nil)
            return
        }
        let channel = context.channel
        write.whenComplete { _ in channel.close(promise: nil) }
    }
}
