import GatewayCore
import NIOCore
import NIOHTTP1

/// The bridge from an upstream attempt to async code (the pool's
/// `HTTPRequestSender` API): the response head completes a promise, the body goes
/// into a ``BodyStream`` the consumer reads with back-pressure, and a
/// streamed request body is pulled from its `BodySource` by a task.
///
/// Used by the OAuth2 token endpoint client; client requests take the direct
/// path (``UpstreamTransport``), which has no such bridge.
/// All its methods run on the connection's event loop.
final class AsyncAttemptDelegate: UpstreamAttemptDelegate {
    private let eventLoop: any EventLoop
    /// Dropped once completed: a promise keeps its value, and an unread body must be
    /// freed (closing the connection) when its consumer drops it.
    private var headPromise: EventLoopPromise<ProxyResponse>?
    private let bodySource: (any BodySource)?
    private let declaredBodyLength: Int?
    private let bodyWriter: RequestBodyWriter
    private var writer: (any UpstreamRequestWriter)?
    private var stream: BodyStream?
    /// A bodyless response's head, handed over at its end (the connection is then back in the pool).
    private var deferredHead: UpstreamResponseHead?

    init(eventLoop: any EventLoop, bodySource: (any BodySource)?, declaredBodyLength: Int?) {
        self.eventLoop = eventLoop
        let promise = eventLoop.makePromise(of: ProxyResponse.self)
        self.headPromise = promise
        self.bodySource = bodySource
        self.declaredBodyLength = declaredBodyLength
        self.bodyWriter = RequestBodyWriter(source: bodySource)
    }

    /// The response head's future; taken once, before the attempt starts (not kept here).
    var response: EventLoopFuture<ProxyResponse> {
        headPromise?.futureResult ?? eventLoop.makeFailedFuture(CancellationError())
    }

    /// The waiting task was cancelled before the head: the attempt fails, the connection closes.
    func cancel() {
        writer?.abort(CancellationError())
    }

    func upstreamAttemptStarted(_ writer: any UpstreamRequestWriter) {
        self.writer = writer
        guard let source = bodySource else { return }
        let bound = NIOLoopBound(writer, eventLoop: eventLoop)
        let eventLoop = self.eventLoop
        let declaredLength = declaredBodyLength
        bodyWriter.start {
            await Self.writeRequestBody(source, writer: bound, eventLoop: eventLoop, declaredLength: declaredLength)
        }
    }

    func upstreamResponseHead(_ head: UpstreamResponseHead) {
        guard head.hasBody else {
            deferredHead = head  // its end follows at once
            return
        }
        let eventLoop = self.eventLoop
        let writer = self.writer.map { NIOLoopBound($0, eventLoop: eventLoop) }
        let stream = BodyStream(
            onDemand: { eventLoop.execute { writer?.value.resumeReading() } },
            onCancel: { eventLoop.execute { writer?.value.abort(CancellationError()) } }
        )
        self.stream = stream
        complete(.success(
            ProxyResponse(status: head.status, headers: head.headers, body: .stream(UpstreamResponseBody(stream), declaredLength: head.declaredLength))
        ))
    }

    func upstreamResponseBodyPart(_ buffer: ByteBuffer) {
        stream?.yield(buffer)
    }

    /// Its consumer pulls each part and writes it on its own.
    func upstreamReadComplete() {}

    /// The whole-response API has no trailers: they are dropped.
    func upstreamResponseTrailers(_ trailers: HTTPHeaders) {}

    func upstreamResponseEnd() {
        if let head = deferredHead {
            deferredHead = nil
            complete(.success(ProxyResponse(status: head.status, headers: head.headers, body: ProxyBody(storage: .empty, declaredLength: head.declaredLength))))
        }
        stream?.finish()
    }

    func upstreamAttemptFailed(_ error: any Error) {
        bodyWriter.abort()
        if let stream {
            stream.fail(error)
        } else {
            complete(.failure(error))
        }
    }

    private func complete(_ result: Result<ProxyResponse, any Error>) {
        let promise = headPromise
        headPromise = nil
        promise?.completeWith(result)
    }

    var upstreamShouldPauseReading: Bool { stream?.shouldPauseReading() ?? false }

    /// Pulls chunks from the client's body and writes them, one write in flight at a time.
    private static func writeRequestBody(
        _ source: any BodySource,
        writer: NIOLoopBound<any UpstreamRequestWriter>,
        eventLoop: any EventLoop,
        declaredLength: Int?
    ) async {
        var written = 0
        do {
            while let chunk = try await nextChunk(of: source) {
                guard chunk.readableBytes > 0 else { continue }
                written += chunk.readableBytes
                if let declaredLength, written > declaredLength {
                    throw GatewayError(.badRequest, "the request body is longer than its Content-Length")
                }
                // With a Content-Length the last byte ends the request: write the end with it
                // (the upstream may answer as soon as it has the last byte).
                let isLast = written == declaredLength
                try await eventLoop.flatSubmit { writer.value.writeBodyPart(chunk, isLast: isLast) }.get()
                if isLast { return }
            }
            if let declaredLength, written != declaredLength {
                throw GatewayError(.badRequest, "the request body ended before its Content-Length")
            }
            try await eventLoop.flatSubmit { writer.value.endRequest() }.get()
        } catch {
            source.cancel()
            eventLoop.execute { writer.value.abort(error) }
        }
    }

    private static func nextChunk(of source: any BodySource) async throws -> ByteBuffer? {
        try Task.checkCancellation()
        do {
            return try await source.next()
        } catch let error as GatewayError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw GatewayError(.badRequest, "the request body could not be read", cause: error)
        }
    }
}
