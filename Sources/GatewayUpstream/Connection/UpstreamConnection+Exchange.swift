import GatewayCore
import NIOCore
import NIOHTTP1

/// One request/response exchange on an established connection.
extension UpstreamConnection {
    /// Sends the request and returns when the response head arrives. A streamed
    /// request body is written by a separate task (the upstream may answer before
    /// it has read the body), one chunk at a time: the next chunk is pulled only
    /// after the previous write reached the socket. Cancelling the calling task
    /// before the head arrives fails the exchange and closes the connection.
    func execute(_ request: ProxyRequest, recorder: AttemptRecorder) async throws -> ProxyResponse {
        let head = request.upstreamRequestHead()
        let requestBody: UpstreamExchangeHandler.RequestBody
        var source: (any BodySource)?
        switch request.body.storage {
        case .empty:
            requestBody = .none
        case .bytes(let buffer):
            requestBody = buffer.readableBytes > 0 ? .bytes(buffer) : .none
        case .stream(let bodySource):
            if request.body.declaredLength == 0 {
                requestBody = .none  // `Content-Length: 0`: nothing to read
            } else {
                requestBody = .streamed
                source = bodySource
            }
        }

        let writer = RequestBodyWriter(source: source)
        let handler = self.handler
        let started: (id: Int, head: EventLoopFuture<UpstreamResponseHead>)
        if eventLoop.inEventLoop {
            // The usual case (the pool prefers a connection on the caller's loop): no hop.
            started = try handler.value.start(head: head, body: requestBody, recorder: recorder, abortRequestBody: writer.abort)
        } else {
            started = try await eventLoop.submit {
                try handler.value.start(head: head, body: requestBody, recorder: recorder, abortRequestBody: writer.abort)
            }.get()
        }

        if let source {
            let exchangeID = started.id
            let declaredLength = request.body.declaredLength
            writer.start {
                await self.writeRequestBody(source, exchangeID: exchangeID, declaredLength: declaredLength)
            }
        }

        let response = try await withTaskCancellationHandler {
            try await started.head.get()
        } onCancel: {
            self.eventLoop.execute { handler.value.cancel(exchangeID: started.id) }
        }
        return Self.makeResponse(response)
    }

    /// Pulls chunks from the client's body and writes them, one write in flight at a time.
    private func writeRequestBody(_ source: any BodySource, exchangeID: Int, declaredLength: Int?) async {
        let handler = self.handler
        let eventLoop = self.eventLoop
        var written = 0
        do {
            while let chunk = try await Self.nextChunk(of: source) {
                guard chunk.readableBytes > 0 else { continue }
                written += chunk.readableBytes
                if let declaredLength, written > declaredLength {
                    throw GatewayError(.badRequest, "the request body is longer than its Content-Length")
                }
                // With a Content-Length the last byte ends the request: write the end with it
                // (the upstream may answer as soon as it has the last byte).
                let isLast = written == declaredLength
                try await eventLoop.flatSubmit {
                    handler.value.writeBodyPart(chunk, isLast: isLast, exchangeID: exchangeID)
                }.get()
                if isLast { return }
            }
            if let declaredLength, written != declaredLength {
                throw GatewayError(.badRequest, "the request body ended before its Content-Length")
            }
            try await eventLoop.flatSubmit {
                handler.value.endRequest(exchangeID: exchangeID)
            }.get()
        } catch {
            source.cancel()
            eventLoop.execute { handler.value.abortRequest(exchangeID: exchangeID, error: error) }
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

    /// The response handed on: hop-by-hop headers removed, `Content-Length` kept
    /// (dropped if `Transfer-Encoding` overrode it) and reported as `declaredLength`.
    /// Responses without a body (HEAD, 204, 304) have `.empty` storage; their
    /// `declaredLength` still mirrors a `Content-Length` header if there was one.
    static func makeResponse(_ response: UpstreamResponseHead) -> ProxyResponse {
        let head = response.head
        let contentLength = head.upstreamContentLength
        var headers = head.headers
        if headers.contains(name: "transfer-encoding") {
            headers.remove(name: "content-length")
        }
        HopByHopHeaders.removeAll(from: &headers)
        let body: ProxyBody
        if let stream = response.body {
            body = .stream(UpstreamResponseBody(stream), declaredLength: contentLength)
        } else {
            body = ProxyBody(storage: .empty, declaredLength: contentLength)
        }
        return ProxyResponse(status: head.status, headers: headers, body: body)
    }
}
