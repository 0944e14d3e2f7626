import GatewayCore
import NIOCore

/// One request/response attempt on an established connection.
extension UpstreamConnection {
    /// How the handler writes the request body itself, and the source a delegate
    /// streams it from otherwise.
    static func requestBody(of request: ProxyRequest) -> (UpstreamAttemptHandler.RequestBody, (any BodySource)?) {
        switch request.body.storage {
        case .empty:
            return (.none, nil)
        case .bytes(let buffer):
            return (buffer.readableBytes > 0 ? .bytes(buffer) : .none, nil)
        case .stream(let source):
            // `Content-Length: 0`: nothing to read.
            return request.body.declaredLength == 0 ? (.none, nil) : (.streamed, source)
        }
    }

    /// Starts an attempt whose parts go to `delegate` (on this connection's loop).
    func start(_ request: ProxyRequest, recorder: AttemptRecorder, delegate: any UpstreamAttemptDelegate) throws {
        eventLoop.preconditionInEventLoop()
        let head: HTTP1RequestHead
        do {
            head = try request.upstreamRequestHead(allocator: channel.allocator, spare: handler.value.spareHeadBuffer.take())
        } catch {
            // Nothing was sent: the connection goes back as it was.
            handler.value.releaseUnused()
            throw error
        }
        try handler.value.start(
            head: head, body: Self.requestBody(of: request).0, upgrade: request.isWebSocketHandshake ? WebSocketUpgrade(for: request) : nil, recorder: recorder, delegate: delegate
        )
    }

    /// Sends the request and returns when the response head arrives. A streamed
    /// request body is written by a separate task (the upstream may answer before
    /// it has read the body), one chunk at a time: the next chunk is pulled only
    /// after the previous write reached the socket. Cancelling the calling task
    /// before the head arrives fails the attempt and closes the connection.
    func execute(_ request: ProxyRequest, recorder: AttemptRecorder) async throws -> ProxyResponse {
        let head: HTTP1RequestHead
        do {
            head = try request.upstreamRequestHead(allocator: channel.allocator)
        } catch {
            let handler = self.handler
            try? await eventLoop.submit { handler.value.releaseUnused() }.get()
            throw error
        }
        let (body, source) = Self.requestBody(of: request)
        let handler = self.handler
        let eventLoop = self.eventLoop
        let (delegate, response) = try await eventLoop.submit {
            let delegate = AsyncAttemptDelegate(eventLoop: eventLoop, bodySource: source, declaredBodyLength: request.body.declaredLength)
            try handler.value.start(head: head, body: body, recorder: recorder, delegate: delegate)
            return (NIOLoopBound(delegate, eventLoop: eventLoop), delegate.response)
        }.get()
        return try await withTaskCancellationHandler {
            try await response.get()
        } onCancel: {
            eventLoop.execute { delegate.value.cancel() }
        }
    }
}
