import GatewayCore
import NIOCore
import NIOHTTP1

/// Writing responses as bytes (``ResponseFraming`` serializes heads, chunks are
/// framed here): streamed ones for exchanges (the connection's side of
/// ``ExchangeClient``), whole ones the gateway makes itself.
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
        context?.writeAndFlush(wrapOutboundOut(ResponseFraming.bareHead(version: .http1_1, code: 100, reason: "Continue")), promise: nil)
    }

    /// Mid-response: the client sees the truncation as a closed connection.
    func abortResponse() {
        pendingHead = nil  // a head not written yet is dropped; what was written goes out before the close
        machine.closeAfterWrite()
        if let context { close(context) }
    }

    /// Takes the response head of the exchange in flight (it goes out with the
    /// first body part, or before anything else: ``writePendingHead(_:)``);
    /// returns whether its body is written.
    func writeResponseHead(_ head: UpstreamResponseHead, info: ExchangeInfo) -> Bool {
        let status = head.status
        let fields = head.fields
        let framing = ResponseFraming(
            status: status, fields: fields, declaredLength: head.declaredLength,
            requestMethod: info.method, requestVersion: info.version,
            keepAlive: machine.keepAliveWanted && !environment.tracker.isDraining,
            via: RequestRouter.responseVia, allocator: allocator,
            spare: spareHeadBuffer.take()
        )
        _ = machine.responseHead(keepAlive: framing.keepAlive)
        responseChunked = framing.chunked
        pendingHead = framing.head
        return !framing.bodyless
    }

    /// Writes the response head taken by ``writeResponseHead(_:info:)``, if it
    /// has not gone yet, with `body` after it in the same buffer when both fit
    /// in a spare head buffer (``ByteBuffer/maxSpareHeadBytes``): a small
    /// response goes as one write, not two. Returns whether `body` went with it.
    @discardableResult
    func writePendingHead(_ context: ChannelHandlerContext, with body: ByteBuffer? = nil) -> Bool {
        guard var head = pendingHead.take() else { return false }
        var merged = false
        if let body, head.readableBytes + body.readableBytes <= ByteBuffer.maxSpareHeadBytes {
            // The head's storage is referenced only here (the spare was taken for it): appended in place.
            head.writeImmutableBuffer(body)
            merged = true
        }
        // Kept for the next head: the write below holds the only other reference.
        spareHeadBuffer = ByteBuffer.spare(after: head)
        context.write(wrapOutboundOut(head), promise: nil)
        return merged
    }

    /// A part of the response body, written unflushed: the exchange flushes
    /// (``flushResponse()``) once the parts of one upstream read are written.
    func writeResponseBodyPart(_ buffer: ByteBuffer) {
        guard let context else { return }
        guard responseChunked else {
            if !writePendingHead(context, with: buffer) { context.write(wrapOutboundOut(buffer), promise: nil) }
            return
        }
        writePendingHead(context)
        // A chunk of size 0 would end the body: an empty part writes nothing.
        guard buffer.readableBytes > 0 else { return }
        context.write(wrapOutboundOut(ChunkedFraming.sizeLine(buffer.readableBytes, allocator: allocator)), promise: nil)
        context.write(wrapOutboundOut(buffer), promise: nil)
        context.write(wrapOutboundOut(ChunkedFraming.after(data: true, isLast: false)), promise: nil)
    }

    func flushResponse() {
        guard let context else { return }
        writePendingHead(context)
        flushSoon(context)
    }

    /// Flushes at the end of this loop's tick, with the other connections'
    /// responses of the tick (``LoopFlushBatch``); at once without a batch.
    func flushSoon(_ context: ChannelHandlerContext) {
        guard let flushBatch else { return context.flush() }
        guard !flushIsDeferred else { return }
        flushIsDeferred = true
        flushBatch.add(self)
    }

    /// Closes the connection once what waits for the end of the tick is
    /// flushed (a close drops writes not flushed).
    func close(_ context: ChannelHandlerContext) {
        flushDeferred()
        context.close(promise: nil)
    }

    /// The deferred flush, at the end of the tick (or before a close).
    func flushDeferred() {
        guard flushIsDeferred else { return }
        flushIsDeferred = false
        context?.flush()
    }

    /// The end of the response's body, flushed: the last chunk, or no bytes at
    /// all. `observed`: the caller needs to know when the response went out (an
    /// empty write then carries the promise); else nil.
    private func writeResponseEnd(_ context: ChannelHandlerContext, observed: Bool, trailers: HTTPHeaders? = nil) -> EventLoopFuture<Void>? {
        writePendingHead(context)
        let chunked = responseChunked
        responseChunked = false
        if chunked, let trailers, !trailers.isEmpty, clientAcceptsTrailers {
            // The client asked for trailers (`TE: trailers`, a gRPC-Web or gRPC client over HTTP/1.1).
            let last = ChunkedFraming.lastChunk(trailers: trailers, allocator: allocator)
            return context.writeAndFlush(wrapOutboundOut(last))
        }
        guard observed else {
            // Nobody waits on it: no promise (the last chunk, if any, goes out with the flush).
            if chunked {
                context.write(wrapOutboundOut(ChunkedFraming.after(data: false, isLast: true)), promise: nil)
            }
            flushSoon(context)
            return nil
        }
        return context.writeAndFlush(wrapOutboundOut(ChunkedFraming.after(data: false, isLast: chunked)))
    }

    /// Ends the response of the exchange in flight.
    func writeResponseEnd(trailers: HTTPHeaders?) {
        guard let context else { return }
        switch machine.responseEnd() {
        case .exchangeDone(let keepAlive):
            if keepAlive {
                lastWrite = writeResponseEnd(context, observed: environment.tracker.isDraining, trailers: trailers)
            } else {
                closeWhenWritten(writeResponseEnd(context, observed: true, trailers: trailers))
            }
            exchangeDone(keepAlive: keepAlive)
        case .awaitRequestEnd(let keepAlive):
            // The rest of the request body is read and dropped (up to a limit), or the connection closes.
            if keepAlive {
                _ = writeResponseEnd(context, observed: false, trailers: trailers)
                resumeReading()
            } else {
                closeWhenWritten(writeResponseEnd(context, observed: true, trailers: trailers))
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
        let written = writeWhole(framing, body: response.body)
        writeResponseEnd(trailers: nil)
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
        closeWhenWritten(writeResponseEnd(context, observed: true))
    }

    /// Head and buffered body of a whole response (the end is written by the caller).
    private func writeWhole(_ framing: ResponseFraming, body: ProxyBody) -> Int {
        responseChunked = framing.chunked
        guard let context else { return 0 }
        context.write(wrapOutboundOut(framing.head), promise: nil)
        guard !framing.bodyless, case .bytes(let buffer) = body.storage, buffer.readableBytes > 0 else { return 0 }
        writeResponseBodyPart(buffer)
        return buffer.readableBytes
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
